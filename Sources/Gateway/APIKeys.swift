#if canImport(Glibc)
import Glibc
#endif
import Crypto

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
            let equal = ConstantTime.equal(stored, digest)
            if equal && found == nil { found = key }
        }
        return found
    }

    /// The hash to put in the configuration for a new key (`pushgate hash-key`).
    public static func hash(_ key: String) -> String {
        SHA256.hex(Array(key.utf8))
    }

    /// Keys must be able to hold 128 random bits: with that, guessing is hopeless at any
    /// rate, so a right key never needs to be refused to stop guessers.
    public static let minimumKeyBits = 128

    /// The most random bits a key of this length and these characters can hold: its
    /// length times log2 of the alphabet its characters suggest (16 for hex digits of one
    /// case; otherwise the sum of the classes it uses: 10 digits, 26 lowercase, 26
    /// uppercase, 33 other visible ASCII). An upper bound: how the key was made is not
    /// known here. Nil for a key with a character outside visible ASCII, which does not
    /// travel in a header unchanged.
    public static func maximumBits(_ key: String) -> Double? {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isLower(_ b: UInt8) -> Bool { b >= 0x61 && b <= 0x7A }
        func isUpper(_ b: UInt8) -> Bool { b >= 0x41 && b <= 0x5A }
        let lowerHex = bytes.allSatisfy { isDigit($0) || ($0 >= 0x61 && $0 <= 0x66) }
        let upperHex = bytes.allSatisfy { isDigit($0) || ($0 >= 0x41 && $0 <= 0x46) }
        var alphabet = 0
        if lowerHex || upperHex {
            alphabet = 16
        } else {
            if bytes.contains(where: isDigit) { alphabet += 10 }
            if bytes.contains(where: isLower) { alphabet += 26 }
            if bytes.contains(where: isUpper) { alphabet += 26 }
            if bytes.contains(where: { !isDigit($0) && !isLower($0) && !isUpper($0) }) { alphabet += 33 }
        }
        return Double(bytes.count) * log2(Double(max(alphabet, 2)))
    }

    /// Why `pushgate hash-key` refuses a key, or nil.
    public static func weakness(_ key: String) -> String? {
        guard let bits = maximumBits(key) else {
            return "a key must be visible ASCII characters (no spaces, no control or non-ASCII characters)"
        }
        guard bits >= Double(minimumKeyBits) else {
            return "this key can hold at most \(Int(bits)) random bits and keys need \(minimumKeyBits) (32 hex digits, 22 base64 characters); make one with: openssl rand -hex 32"
        }
        return nil
    }
}
