/// The stable reasons a deep link is refused. The raw values are the contract shared by
/// the CLI's `--json`, the HTTP API and the metrics: never rename one.
public enum LinkErrorCode: String, Sendable, CaseIterable, Codable {
    case tooLong
    case malformed
    case schemeNotAllowed
    case hostNotAllowed
    case userInfoNotAllowed
    case portNotAllowed
    case fragmentNotAllowed
    case forbiddenCharacter
    case invalidPercentEncoding
    case dotSegment
    case emptySegment
    case trailingSlash
    case tooManyPathSegments
    case tooManyQueryItems
    case unknownQueryParameter
    case duplicateQueryParameter
    case credentialInQuery
    case invalidParameter
    case noMatchingRoute
}

/// A refused link: exactly one code, and a message that quotes input only escaped.
public struct LinkRejection: Error, Sendable, Equatable {
    public var code: LinkErrorCode
    /// The message's UTF-8, as the canonicaliser composed it (no String until asked for).
    var text: LinkMessage

    public var message: String {
        get { text.string }
        set { text = LinkMessage(newValue) }
    }

    public init(code: LinkErrorCode, message: String) {
        self.code = code
        self.text = LinkMessage(message)
    }

    init(code: LinkErrorCode, _ text: LinkMessage) {
        self.code = code
        self.text = text
    }
}

/// A name and its value, in order (route parameters, query items).
public struct NamedValue: Sendable, Equatable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An accepted link: its one canonical form and what the app's router will see.
public struct CanonicalLink: Sendable, Equatable {
    /// `https://` + canonical host + path + query.
    public var canonical: String
    /// The matching route's name.
    public var route: String
    /// Typed path parameters in pattern order, decoded (uuid lowercased). For a `*`
    /// route the rest of the path is under the name `*`.
    public var params: [NamedValue]
    /// Query items kept, in canonical order, decoded.
    public var query: [NamedValue]

    public init(canonical: String, route: String, params: [NamedValue], query: [NamedValue]) {
        self.canonical = canonical
        self.route = route
        self.params = params
        self.query = query
    }
}

public enum LinkCheckResult: Sendable, Equatable {
    case accepted(CanonicalLink)
    case rejected(LinkRejection)
}
