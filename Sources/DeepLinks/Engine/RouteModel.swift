/// The app a route table belongs to: its AASA app ID (`teamId.bundleId`) and, when it has
/// one, the custom URL scheme its router also accepts.
public struct AppIdentity: Sendable, Equatable {
    public let teamId: String
    public let bundleId: String
    /// Lowercase; compared case-insensitively with a link's scheme. Nil for an app that
    /// opens https links only.
    public let scheme: String?

    public init(teamId: String, bundleId: String, scheme: String?) {
        self.teamId = teamId
        self.bundleId = bundleId
        self.scheme = scheme
    }

    /// `TEAMID.bundleId`, as AASA's `appIDs` spell it.
    public var appID: String { teamId + "." + bundleId }
}

/// One segment of a route's path pattern.
public enum PathSegment: Sendable, Equatable {
    /// Matches exactly this text (case-sensitive).
    case literal(String)
    /// `:name` — one segment whose decoded value has the given type.
    case parameter(name: String, type: ValueType)
    /// A final `*`: one or more remaining segments.
    case wildcard

    /// Literal beats parameter beats wildcard (Go 1.22 ServeMux precedence).
    var specificityRank: Int {
        switch self {
        case .literal: return 2
        case .parameter: return 1
        case .wildcard: return 0
        }
    }
}

/// A query key a route declares.
public struct QueryParameter: Sendable, Equatable {
    public let key: String
    public let type: ValueType
    /// Optional unless marked `"required": true` in the table.
    public let required: Bool

    public init(key: String, type: ValueType, required: Bool) {
        self.key = key
        self.type = type
        self.required = required
    }
}

/// One entry of the route table.
public struct Route: Sendable, Equatable {
    public let name: String
    /// The pattern as written, e.g. `/product/:id`.
    public let pattern: String
    public let segments: [PathSegment]
    /// Declared query keys, in declaration order (the canonical order).
    public let query: [QueryParameter]

    public init(name: String, pattern: String, segments: [PathSegment], query: [QueryParameter]) {
        self.name = name
        self.pattern = pattern
        self.segments = segments
        self.query = query
    }

    /// The name under which a `*` route reports the rest of the path.
    public static let wildcardParameterName = "*"

    var endsWithWildcard: Bool { segments.last == .wildcard }
}
