/// What AASA generation and validation need to know about one route: the shape of its
/// path and its required query keys. Kept apart from the route table's own model so the
/// AASA code depends only on this.
public struct AASARouteShape: Sendable, Equatable {
    public enum Segment: Sendable, Equatable {
        /// Decoded literal text.
        case literal(String)
        case parameter(name: String, kind: ValueKind)
        /// The final `*`: one or more remaining segments.
        case wildcard
    }

    public enum ValueKind: Sendable, Equatable {
        case int, uuid, slug, string
        case oneOf([String])
    }

    public var name: String
    /// The pattern as written in the table (`/product/:id`), for comments and messages.
    public var pattern: String
    public var segments: [Segment]
    /// Query keys a link must carry, in declaration order.
    public var requiredQuery: [(name: String, kind: ValueKind)]

    public init(name: String, pattern: String, segments: [Segment],
                requiredQuery: [(name: String, kind: ValueKind)] = []) {
        self.name = name
        self.pattern = pattern
        self.segments = segments
        self.requiredQuery = requiredQuery
    }

    public static func == (a: AASARouteShape, b: AASARouteShape) -> Bool {
        a.name == b.name && a.pattern == b.pattern && a.segments == b.segments
            && a.requiredQuery.map(\.name) == b.requiredQuery.map(\.name)
            && a.requiredQuery.map(\.kind) == b.requiredQuery.map(\.kind)
    }

    public var hasWildcard: Bool { segments.last == .wildcard }

    /// Whether decoded path segments have this route's shape (types other than lists of
    /// values are not checked; see `AASAValidator`).
    public func fits(_ path: [String]) -> Bool {
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

extension AASARouteShape.ValueKind {
    /// Concrete values the route accepts, for probing an AASA file.
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

/// Percent-encoding for path text written into patterns and sample URLs: everything but
/// RFC 3986 unreserved characters and the sub-delimiters a path keeps raw. `*` and `?` are
/// always encoded because they are wildcards in Apple's patterns.
enum AASAPercentEncoding {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if isKept(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    private static let hex: [Character] = Array("0123456789ABCDEF")

    private static func isKept(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~!$&'()+,;=:@".utf8.contains(b)
        }
    }
}
