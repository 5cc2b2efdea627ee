import HTTPServer
import StrictJSON

/// Query strings of the paged endpoints: only the named whole-number parameters, each in
/// its range; every problem reported at once, each located at its parameter.
enum QueryParameters {
    static func read(_ request: HTTPRequest, integers: [String: ClosedRange<Int>], strings: Set<String> = [])
        -> Result<[String: Int], Problem>
    {
        var errors: [Diagnostic] = []
        var values: [String: Int] = [:]
        for item in request.query {
            if let range = integers[item.name] {
                if let n = Int(item.value), range.contains(n) { values[item.name] = n } else {
                    let bound = range.upperBound == Int.max ? "from \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
                    errors.append(Diagnostic(.invalidValue, at: .parameter(item.name), "expected a whole number \(bound)"))
                }
            } else if !strings.contains(item.name) {
                let known = (Array(integers.keys) + strings).sorted().joined(separator: ", ")
                errors.append(Diagnostic(.unknownParameter, at: .parameter(item.name), "unknown query parameter; expected \(known)"))
            }
        }
        guard errors.isEmpty else { return .failure(.invalidQuery(errors)) }
        return .success(values)
    }
}
