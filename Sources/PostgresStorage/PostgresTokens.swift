import Storage

/// Dead tokens, re-registration, the feedback webhook's outbox, and the provider token
/// each signing key shares across the fleet (under a row lock every instance respects).
extension PostgresCampaignStorage {
    public func registerToken(_ token: String, app: String?, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        try transaction { db throws(StorageError) -> DeadToken? in
            let find = try db.execute("""
                SELECT dead_at_ms, dead_reason, recorded_at, app FROM tokens WHERE token = $1 FOR UPDATE
                """, [.text(token)])
            var dead: DeadToken?
            if find.rows > 0 {
                let owner = find.text(0, 3)
                // Another app's dead token is not this app's to revive (nor to report).
                if let app, owner != app, owner != "" { return nil }
                if !find.isNull(0, 0), app == nil || owner == app {
                    dead = DeadToken(token: token, timestampMilliseconds: find.int(0, 0), reason: find.text(0, 1), recordedAt: find.double(0, 2))
                }
            }
            try db.execute("""
                INSERT INTO tokens(token, registered_at_ms, app) VALUES ($1, $2, $3)
                ON CONFLICT (token) DO UPDATE SET registered_at_ms = greatest(coalesce(tokens.registered_at_ms, 0), excluded.registered_at_ms)
                """, [.text(token), .int(time), .text(app ?? "")])
            return dead
        }
    }

    public func deadTokens(app: String?, sinceMilliseconds since: Int64, after cursor: (Int64, String)?, limit: Int) throws(StorageError) -> [DeadToken] {
        try reading { db throws(StorageError) in
            let page = try db.execute("""
                SELECT token, dead_at_ms, dead_reason, recorded_at FROM tokens
                WHERE dead_at_ms IS NOT NULL AND dead_at_ms >= $1 AND (dead_at_ms, token) > ($2, $3)
                  AND (registered_at_ms IS NULL OR registered_at_ms <= dead_at_ms) AND ($4::text IS NULL OR app = $4)
                ORDER BY dead_at_ms, token LIMIT $5
                """, [.int(since), .int(cursor?.0 ?? Int64.min), .text(cursor?.1 ?? ""), .optional(app), .integer(limit)])
            return (0..<page.rows).map {
                DeadToken(token: page.text($0, 0), timestampMilliseconds: page.int($0, 1), reason: page.text($0, 2), recordedAt: page.double($0, 3))
            }
        }
    }

    public func pendingFeedback(limit: Int) throws(StorageError) -> [FeedbackItem] {
        try transaction { db throws(StorageError) -> [FeedbackItem] in
            guard let batch = try openBatch(db, table: "feedback_outbox", limit: limit) else { return [] }
            // The app is the token's: `recordDead` sets it in the transaction that queues the item.
            let page = try db.execute("""
                SELECT f.seq, f.token, f.timestamp_ms, f.reason, coalesce(t.app, '') FROM feedback_outbox f
                LEFT JOIN tokens t ON t.token = f.token WHERE f.batch = $1 ORDER BY f.seq
                """, [.int(batch)])
            return (0..<page.rows).map {
                FeedbackItem(seq: page.int($0, 0), token: page.text($0, 1), timestampMilliseconds: page.int($0, 2), reason: page.text($0, 3),
                             app: page.text($0, 4))
            }
        }
    }

    public func acknowledgeFeedback(through seq: Int64) throws(StorageError) {
        try acknowledge(table: "feedback_outbox", through: seq)
    }

    // MARK: Provider tokens

    public func providerToken(_ key: SigningKeyName) throws(StorageError) -> StoredProviderToken {
        try reading { db throws(StorageError) in try Self.providerToken(db, key, lock: false) }
    }

    public func updateProviderToken(_ key: SigningKeyName,
                                    _ change: (StoredProviderToken) -> StoredProviderToken?) throws(StorageError) -> StoredProviderToken {
        try transaction { db throws(StorageError) -> StoredProviderToken in
            // The row exists before it is locked, so two instances minting the first token
            // for a key queue on one lock.
            try db.execute("""
                INSERT INTO provider_tokens(team_id, key_id, key_sha256) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
                """, [.text(key.teamId), .text(key.keyId), .text(key.fingerprint)])
            let current = try Self.providerToken(db, key, lock: true)
            guard let next = change(current), next != current else { return current }
            try db.execute("""
                UPDATE provider_tokens SET token = $4, issued_at = $5, paused_until = $6
                WHERE team_id = $1 AND key_id = $2 AND key_sha256 = $3
                """, [.text(key.teamId), .text(key.keyId), .text(key.fingerprint), .optional(next.compact),
                      .optional(next.issuedAt), .optional(next.pausedUntil)])
            return next
        }
    }

    static func providerToken(_ db: PGConnection, _ key: SigningKeyName, lock: Bool) throws(StorageError) -> StoredProviderToken {
        let find = try db.execute("""
            SELECT token, issued_at, paused_until FROM provider_tokens WHERE team_id = $1 AND key_id = $2 AND key_sha256 = $3
            """ + (lock ? " FOR UPDATE" : ""), [.text(key.teamId), .text(key.keyId), .text(key.fingerprint)])
        guard find.rows > 0 else { return StoredProviderToken() }
        return StoredProviderToken(compact: find.optionalText(0, 0), issuedAt: find.optionalInt(0, 1), pausedUntil: find.optionalInt(0, 2))
    }
}
