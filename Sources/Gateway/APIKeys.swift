import COpenSSL
import APNs

/// One caller's key as the configuration stores it: a name and the SHA-256 of the key,
/// never the key itself.
public struct APIKey: Sendable, Equatable {
    public var name: String
    /// Lowercase hex SHA-256 of the bearer token.
    public var sha256: String
    public var rateLimit: RateLimit?
    /// The apps the key may use; nil: every app.
    public var apps: [String]?
    /// An admin key sees every app and every key's campaigns.
    public var isAdmin: Bool

    public init(name: String, sha256: String, rateLimit: RateLimit? = nil, apps: [String]? = nil, isAdmin: Bool = false) {
        self.name = name
        self.sha256 = sha256.lowercased()
        self.rateLimit = rateLimit
        self.apps = apps
        self.isAdmin = isAdmin
    }
}

/// Finds which configured key a bearer token is. Every stored hash is compared, each in
/// constant time, so the time taken says nothing about which key or how much matched.
public struct APIKeyring: Sendable {
    public let keys: [APIKey]

    public init(_ keys: [APIKey]) {
        self.keys = keys
    }

    public var isEmpty: Bool { keys.isEmpty }

    public func authenticate(bearer token: String) -> APIKey? {
        let digest = Array(SHA256.hex(Array(token.utf8)).utf8)
        var found: APIKey?
        for key in keys {
            let stored = Array(key.sha256.utf8)
            guard stored.count == digest.count else { continue }
            let equal = stored.withUnsafeBytes { a in
                digest.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
            }
            if equal && found == nil { found = key }
        }
        return found
    }

    /// The hash to put in the configuration for a new key (`pushgate hash-key`).
    public static func hash(_ key: String) -> String {
        SHA256.hex(Array(key.utf8))
    }
}
