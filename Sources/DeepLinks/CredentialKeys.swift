/// Query keys that carry secrets. Secrets do not belong in links (they end up in logs,
/// screenshots and analytics), so a link with one is refused as `credentialInQuery`
/// whatever the route declares, and a table may not declare one.
enum CredentialKeys {
    static let all: [String] = [
        "token", "access_token", "id_token", "refresh_token", "auth_token", "jwt",
        "password", "passwd", "pwd", "secret", "client_secret",
        "api_key", "apikey", "api-key", "auth", "authorization",
        "session", "session_id", "sessionid", "sid", "code",
    ]

    /// ASCII case-insensitive match against the list (keys are compared decoded).
    static func contains(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.count >= 3, key.count <= 13 else { return false }
        outer: for candidate in all where candidate.utf8.count == key.count {
            var i = 0
            for c in candidate.utf8 {
                if ASCII.lowercased(key[i]) != c { continue outer }
                i += 1
            }
            return true
        }
        return false
    }

    static func contains(_ key: String) -> Bool {
        var copy = key
        return copy.withUTF8 { contains($0) }
    }
}
