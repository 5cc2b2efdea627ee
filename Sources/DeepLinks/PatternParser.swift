import StrictJSON

/// Turns a route's `path` pattern and its `params` types into segments, refusing
/// anything the canonicaliser could never match or that could mean two things.
enum PatternParser {
    static let maxSegments = 32

    /// - Returns: the segments, or a message saying what is wrong with the pattern.
    static func parse(_ pattern: String, params: [(name: String, type: ValueType)])
        -> Result<[PathSegment], PatternProblem>
    {
        guard pattern.hasPrefix("/") else { return .failure(.pattern("must start with '/'")) }
        if pattern == "/" { return params.isEmpty ? .success([]) : unused(params, used: []) }
        let parts = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > maxSegments {
            return .failure(.pattern("has \(parts.count) segments; the limit is \(maxSegments)"))
        }
        var segments: [PathSegment] = []
        var used: [String] = []
        for (index, part) in parts.enumerated() {
            let position = "segment \(index + 1)"
            if part.isEmpty {
                return .failure(.pattern(index == parts.count - 1
                    ? "must not end with '/'" : "has an empty \(position) ('//')"))
            }
            if part == "*" {
                guard index == parts.count - 1 else {
                    return .failure(.pattern("has '*' in \(position); '*' may only be the last segment"))
                }
                segments.append(.wildcard)
            } else if part.hasPrefix(":") {
                let name = String(part.dropFirst())
                guard ASCII.isIdentifier(name) else {
                    return .failure(.pattern("has an invalid parameter name \(JSONWriter.quoted(name)) in \(position) (expected [A-Za-z_][A-Za-z0-9_]*)"))
                }
                guard !used.contains(name) else {
                    return .failure(.pattern("uses parameter \(JSONWriter.quoted(name)) twice"))
                }
                guard let type = params.first(where: { $0.name == name })?.type else {
                    return .failure(.undeclared(name))
                }
                used.append(name)
                segments.append(.parameter(name: name, type: type))
            } else {
                guard part != ".", part != "..", ASCII.isUnreservedText(String(part)) else {
                    return .failure(.pattern("has literal segment \(JSONWriter.quoted(String(part))) in \(position); literals use only A-Z a-z 0-9 - . _ ~ and are not '.' or '..'"))
                }
                segments.append(.literal(String(part)))
            }
        }
        return unused(params, used: used).map { _ in segments }
    }

    private static func unused(_ params: [(name: String, type: ValueType)], used: [String])
        -> Result<[PathSegment], PatternProblem>
    {
        for param in params where !used.contains(param.name) {
            return .failure(.unused(param.name))
        }
        return .success([])
    }
}

/// What is wrong with a pattern; the loader picks the JSON path to blame.
enum PatternProblem: Error {
    /// The pattern text itself (blamed on `path`).
    case pattern(String)
    /// `:name` with no type in `params` (blamed on `path`).
    case undeclared(String)
    /// A `params` entry the pattern never uses (blamed on `params.name`).
    case unused(String)
}
