/// Query keys that carry secrets. Secrets do not belong in links (they end up in logs,
/// screenshots and analytics), so a link with one is refused as `credentialInQuery`
/// whatever the route declares, and a table may not declare one.
public enum CredentialKeys {
    static let all: [String] = [
        "token", "access_token", "id_token", "refresh_token", "auth_token", "jwt",
        "password", "passwd", "pwd", "secret", "client_secret",
        "api_key", "apikey", "api-key", "auth", "authorization",
        "session", "session_id", "sessionid", "sid", "code",
    ]

    /// The list grouped by length, as bytes.
    private static let byLength: [[[UInt8]]] = {
        var groups = [[[UInt8]]](repeating: [], count: 16)
        for key in all { groups[key.utf8.count].append(Array(key.utf8)) }
        return groups
    }()

    /// ASCII case-insensitive match against the list (keys are compared decoded).
    static func contains(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.count < 16 else { return false }
        outer: for candidate in byLength[key.count] {
            for i in 0..<key.count where ASCII.lowercased(key[i]) != candidate[i] { continue outer }
            return true
        }
        return false
    }

    /// The list grouped by length (index: length), in frozen memory, for the scanner.
    static func frozen(in memory: FrozenMemory) -> UnsafeBufferPointer<UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>> {
        memory.copy(byLength.map { group in memory.copy(group.map { memory.copy($0) }) })
    }

    /// `contains(_:)` over the groups `frozen(in:)` made.
    @inline(__always)
    static func contains(_ key: UnsafeBufferPointer<UInt8>,
                         in groups: UnsafeBufferPointer<UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>>) -> Bool {
        guard key.count < groups.count else { return false }
        outer: for candidate in groups[key.count] {
            for i in 0..<key.count where ASCII.lowercased(key[i]) != candidate[i] { continue outer }
            return true
        }
        return false
    }

    public static func contains(_ key: String) -> Bool {
        var copy = key
        return copy.withUTF8 { contains($0) }
    }
}
