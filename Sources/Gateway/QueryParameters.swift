import HTTPServer
import StrictJSON

/// The one rule for query strings, on every endpoint: only the parameters the endpoint
/// takes (`taken`, by operation), each at most once, whole numbers as plain decimal
/// digits. Anything else is 400 `invalidQuery`, every problem reported at once, each
/// located at its parameter. The server decodes the query as a form does: `+` is a
/// space and `%2B` a plus sign, so `limit=+5` (" 5") and `limit=%2B5` ("+5") are both
/// refused, as not digits.
enum QueryParameters {
    /// The query parameters each operation takes; an operation not listed takes none.
    /// The OpenAPI document declares the same (a test compares them).
    static let taken: [String: [String]] = [
        "campaigns.create": ["parts"],
        "campaigns.list": ["limit", "before", "app", "status"],
        "campaigns.get": ["page", "per_page", "state"],
        "campaigns.reasons": ["state"],
        "tokens.dead": ["since", "limit", "cursor"],
        "channels.list": ["environment"],
        "channels.show": ["environment"],
        "channels.delete": ["environment"],
    ]

    /// Unknown and repeated parameters; nil when there are none.
    static func shapeProblem(_ query: [(name: String, value: String)], taken: [String]) -> Problem? {
        let errors = shapeErrors(query, taken: taken)
        return errors.isEmpty ? nil : .invalidQuery(errors)
    }

    static func shapeErrors(_ query: [(name: String, value: String)], taken: [String]) -> [Diagnostic] {
        var errors: [Diagnostic] = []
        var seen: [String: Int] = [:]
        for item in query { seen[item.name, default: 0] += 1 }
        var reported = Set<String>()
        for item in query where reported.insert(item.name).inserted {
            let shown = TextSafety.excerpt(item.name, limit: 64)
            if !taken.contains(item.name) {
                let expected = taken.isEmpty ? "this endpoint takes no query parameters" : "expected \(taken.sorted().joined(separator: ", "))"
                errors.append(Diagnostic(.unknownParameter, at: .parameter(shown), "unknown query parameter; \(expected)"))
            } else if let count = seen[item.name], count > 1 {
                errors.append(Diagnostic(.duplicateParameter, at: .parameter(shown), "given \(count) times; give it once"))
            }
        }
        return errors
    }

    /// The whole-number parameters among `integers`, each in its range. Which parameters
    /// may be given, and how often, was checked before the handler (`shapeProblem`).
    static func read(_ request: HTTPRequest, integers: [String: ClosedRange<Int>]) throws(Problem) -> [String: Int] {
        var errors: [Diagnostic] = []
        var values: [String: Int] = [:]
        for item in request.query {
            guard let range = integers[item.name], values[item.name] == nil else { continue }
            if let n = wholeNumber(item.value), range.contains(n) { values[item.name] = n } else {
                let bound = range.upperBound == Int.max ? "from \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
                errors.append(Diagnostic(.invalidValue, at: .parameter(item.name), "expected a whole number \(bound) in plain digits"))
            }
        }
        guard errors.isEmpty else { throw .invalidQuery(errors) }
        return values
    }

    /// Decimal digits only (no sign, no space) that fit an Int; nil otherwise.
    static func wholeNumber(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}
