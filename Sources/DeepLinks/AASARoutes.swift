/// What AASA generation and validation need from routes: their path shape and concrete
/// sample values.
extension Route {
    /// Query keys a link must carry, in declaration order.
    var requiredQuery: [QueryParameter] { query.filter(\.required) }

    /// Whether decoded path segments have this route's shape: literals equal, one
    /// non-empty segment per parameter (a list of values exact), one or more non-empty
    /// segments for `*`. Other value types are not checked: `int` cannot be written in an
    /// AASA pattern (see `AASAValidator`).
    func fits(_ path: [String]) -> Bool {
        for (i, segment) in segments.enumerated() {
            switch segment {
            case .wildcard:
                return path.count > i && !path[i...].contains("")
            case .literal(let text):
                guard i < path.count, path[i] == text else { return false }
            case .parameter(_, .oneOf(let values)):
                guard i < path.count, values.contains(path[i]) else { return false }
            case .parameter:
                guard i < path.count, !path[i].isEmpty else { return false }
            }
        }
        return path.count == segments.count
    }
}

extension ValueType {
    /// Concrete values the type accepts, for probing an AASA file.
    var samples: [String] {
        switch self {
        case .int: return ["1"]
        case .uuid: return ["123e4567-e89b-12d3-a456-426614174000"]
        case .slug: return ["a"]
        case .string: return ["x"]
        case .oneOf(let values): return values
        }
    }
}
