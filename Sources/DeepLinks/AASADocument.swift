import StrictJSON

/// The `applinks` part of an `apple-app-site-association` file, as Apple reads it.
/// Other services (`webcredentials`, `appclips`, …) are not needed for universal links
/// and are skipped.
public struct AASADocument: Sendable, Equatable {
    public var details: [AASADetail]
    /// Things in the file that Apple silently ignores (a misspelt key, `paths` beside
    /// `components`): almost always a mistake worth reporting.
    public var ignored: [AASAIgnored]

    public init(details: [AASADetail], ignored: [AASAIgnored] = []) {
        self.details = details
        self.ignored = ignored
    }
}

/// One `applinks.details[]` entry: the apps it names and the rules, in file order.
public struct AASADetail: Sendable, Equatable {
    /// From `appIDs`, or the legacy single `appID`.
    public var appIDs: [String]
    public var rules: [AASARule]
    /// Where this entry is (`applinks.details[0]`).
    public var location: JSONPath

    public init(appIDs: [String], rules: [AASARule], location: JSONPath) {
        self.appIDs = appIDs
        self.rules = rules
        self.location = location
    }
}

/// The URL parts a rule tests, percent-encoded as they appear in the URL.
public struct AASAURLParts: Sendable, Equatable {
    public var path: String
    /// Without the `?`; nil when the URL has none.
    public var query: String?
    /// Without the `#`; nil when the URL has none.
    public var fragment: String?

    public init(path: String, query: String? = nil, fragment: String? = nil) {
        self.path = path
        self.query = query
        self.fragment = fragment
    }
}

/// How a `?` key constrains the query.
public enum AASAQueryRule: Sendable, Equatable {
    /// String form: one pattern over the whole query string.
    case whole(AASAPattern)
    /// Dictionary form: every named item must be present with a value matching its
    /// pattern; items not named are ignored.
    case items([(name: String, pattern: AASAPattern)])

    public static func == (a: AASAQueryRule, b: AASAQueryRule) -> Bool {
        switch (a, b) {
        case (.whole(let x), .whole(let y)): return x == y
        case (.items(let x), .items(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.name == $1.name && $0.pattern == $1.pattern }
        default: return false
        }
    }
}

/// One matching rule: a modern `components` entry or a legacy `paths` string (which only
/// constrains the path; `NOT ` makes it an exclusion).
public struct AASARule: Sendable, Equatable {
    /// nil means the default `*`.
    public var path: AASAPattern?
    public var query: AASAQueryRule?
    public var fragment: AASAPattern?
    public var exclude: Bool
    public var comment: String?
    public var caseSensitive: Bool
    public var percentEncoded: Bool
    /// Where the rule is (`applinks.details[0].components[3]` or `….paths[1]`).
    public var location: JSONPath

    public init(path: AASAPattern?, query: AASAQueryRule? = nil, fragment: AASAPattern? = nil,
                exclude: Bool = false, comment: String? = nil, caseSensitive: Bool = true,
                percentEncoded: Bool = true, location: JSONPath = .root) {
        self.path = path
        self.query = query
        self.fragment = fragment
        self.exclude = exclude
        self.comment = comment
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
        self.location = location
    }
}

/// Something in the file Apple does not act on.
public struct AASAIgnored: Sendable, Equatable {
    public var location: JSONPath
    public var message: String

    public init(location: JSONPath, message: String) {
        self.location = location
        self.message = message
    }
}
