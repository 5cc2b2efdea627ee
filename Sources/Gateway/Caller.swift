/// Who is asking: the API key's name, the apps it may use and whether it is an admin.
/// A key sees only what it created and only its apps; an admin sees everything. With no
/// keys configured the one caller is the operator, who sees everything.
public struct Caller: Sendable, Equatable {
    /// nil when no keys are configured.
    public let keyName: String?
    /// nil: every app.
    public let apps: Set<String>?
    public let isAdmin: Bool

    public init(keyName: String?, apps: Set<String>?, isAdmin: Bool) {
        self.keyName = keyName
        self.apps = apps
        self.isAdmin = isAdmin
    }

    public init(key: APIKey) {
        self.init(keyName: key.name, apps: key.isAdmin ? nil : key.apps.map(Set.init), isAdmin: key.isAdmin)
    }

    /// The caller when no API keys are configured (the server then listens on loopback only).
    public static let open = Caller(keyName: nil, apps: nil, isAdmin: true)

    public func mayUse(app: String) -> Bool { apps?.contains(app) ?? true }

    /// The owner recorded on a campaign this caller creates ("" when no keys are configured).
    public var owner: String { keyName ?? "" }

    /// Whether a campaign created by `owner` is this caller's to see.
    public func sees(owner: String) -> Bool { isAdmin || owner == self.owner }
}
