import HTTPServer

/// Query strings of the paged endpoints: only the named whole-number parameters, each in
/// its range; every problem reported at once, with `?name` as its pointer.
enum QueryParameters {
    static func read(_ request: HTTPRequest, integers: [String: ClosedRange<Int>], strings: Set<String> = [])
        -> Result<[String: Int], Problem>
    {
        var errors: [Problem.FieldError] = []
        var values: [String: Int] = [:]
        for item in request.query {
            if let range = integers[item.name] {
                if let n = Int(item.value), range.contains(n) { values[item.name] = n } else {
                    let bound = range.upperBound == Int.max ? "from \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
                    errors.append(.init(pointer: "?" + item.name, code: "invalidParameter", detail: "\(item.name) must be a whole number \(bound)"))
                }
            } else if !strings.contains(item.name) {
                let known = (Array(integers.keys) + strings).sorted().joined(separator: ", ")
                errors.append(.init(pointer: "?" + item.name, code: "unknownParameter", detail: "unknown query parameter; expected \(known)"))
            }
        }
        guard errors.isEmpty else {
            return .failure(Problem(status: 400, code: errors.count == 1 ? errors[0].code : "invalidQuery", title: "Bad Request",
                                    detail: errors.map(\.detail).joined(separator: "; "), errors: errors))
        }
        return .success(values)
    }
}
