/// The shared provider tokens. The lock is SQLite's write lock (`BEGIN IMMEDIATE`), which
/// every process opening the file respects.
extension SQLiteCampaignStorage {
    public func providerToken(_ key: SigningKeyName) throws(StorageError) -> StoredProviderToken {
        try reading { db throws(StorageError) in try Self.providerToken(db, key) }
    }

    public func updateProviderToken(_ key: SigningKeyName,
                                    _ change: (StoredProviderToken) -> StoredProviderToken?) throws(StorageError) -> StoredProviderToken {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> StoredProviderToken in
                let current = try Self.providerToken(db, key)
                guard let next = change(current), next != current else { return current }
                try db.statement("""
                    INSERT INTO provider_tokens(team_id, key_id, key_sha256, token, issued_at, paused_until) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(team_id, key_id, key_sha256) DO UPDATE SET token = excluded.token,
                        issued_at = excluded.issued_at, paused_until = excluded.paused_until
                    """).bind(.text(key.teamId), .text(key.keyId), .text(key.fingerprint), .optional(next.compact),
                              .optional(next.issuedAt), .optional(next.pausedUntil)).run()
                return next
            }
        }
    }

    static func providerToken(_ db: SQLiteDatabase, _ key: SigningKeyName) throws(StorageError) -> StoredProviderToken {
        let find = try db.statement("""
            SELECT token, issued_at, paused_until FROM provider_tokens WHERE team_id = ? AND key_id = ? AND key_sha256 = ?
            """).bind(.text(key.teamId), .text(key.keyId), .text(key.fingerprint))
        guard try find.step() else { return StoredProviderToken() }
        return StoredProviderToken(compact: find.optionalText(0), issuedAt: find.optionalInt(1), pausedUntil: find.optionalInt(2))
    }
}
