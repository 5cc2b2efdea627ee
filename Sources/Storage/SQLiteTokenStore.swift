/// Dead tokens, re-registration and the feedback webhook's outbox.
extension SQLiteCampaignStorage {
    public func registerToken(_ token: String, app: String?, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> DeadToken? in
                // Another app's dead token is not this app's to revive (nor to report).
                let find = try db.statement("""
                    SELECT dead_at_ms, dead_reason, recorded_at FROM tokens WHERE token = ? AND dead_at_ms IS NOT NULL AND (? IS NULL OR app = ?)
                    """).bind(.text(token), .optional(app), .optional(app))
                let dead = try find.step() ? DeadToken(token: token, timestampMilliseconds: find.int(0), reason: find.text(1),
                                                         recordedAt: find.double(2)) : nil
                find.reset()
                let owner = try db.statement("SELECT app FROM tokens WHERE token = ?").bind(.text(token)).firstText()
                if let app, let owner, owner != app, owner != "" { return nil }
                try db.statement("""
                    INSERT INTO tokens(token, registered_at_ms, app) VALUES (?, ?, ?)
                    ON CONFLICT(token) DO UPDATE SET registered_at_ms = max(coalesce(tokens.registered_at_ms, 0), excluded.registered_at_ms)
                    """).bind(.text(token), .int(time), .text(app ?? "")).run()
                return dead
            }
        }
    }

    public func deadTokens(app: String?, sinceMilliseconds since: Int64, after cursor: (Int64, String)?, limit: Int) throws(StorageError) -> [DeadToken] {
        try reading { db throws(StorageError) in
            let page = try db.statement("""
                SELECT token, dead_at_ms, dead_reason, recorded_at FROM tokens INDEXED BY tokens_dead
                WHERE dead_at_ms IS NOT NULL AND dead_at_ms >= ? AND (dead_at_ms, token) > (?, ?)
                  AND (registered_at_ms IS NULL OR registered_at_ms <= dead_at_ms) AND (? IS NULL OR app = ?)
                ORDER BY dead_at_ms, token LIMIT ?
                """).bind(.int(since), .int(cursor?.0 ?? Int64.min), .text(cursor?.1 ?? ""), .optional(app), .optional(app), .integer(limit))
            var tokens: [DeadToken] = []
            while try page.step() {
                tokens.append(DeadToken(token: page.text(0), timestampMilliseconds: page.int(1), reason: page.text(2), recordedAt: page.double(3)))
            }
            return tokens
        }
    }

    public func pendingFeedback(limit: Int) throws(StorageError) -> [FeedbackItem] {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> [FeedbackItem] in
                guard let batch = try Self.openBatch(db, table: "feedback_outbox", limit: limit) else { return [] }
                // The app is the token's: `recordDead` sets it in the same transaction that
                // queues the item (a device token is one app's; '' for rows before apps).
                let page = try db.statement("""
                    SELECT f.seq, f.token, f.timestamp_ms, f.reason, coalesce(t.app, '') FROM feedback_outbox f
                    LEFT JOIN tokens t ON t.token = f.token WHERE f.batch = ? ORDER BY f.seq
                    """).bind(.int(batch))
                var items: [FeedbackItem] = []
                while try page.step() {
                    items.append(FeedbackItem(seq: page.int(0), token: page.text(1), timestampMilliseconds: page.int(2), reason: page.text(3),
                                              app: page.text(4)))
                }
                return items
            }
        }
    }

    public func acknowledgeFeedback(through seq: Int64) throws(StorageError) {
        try writing { db throws(StorageError) in
            try db.statement("DELETE FROM feedback_outbox WHERE seq <= ?").bind(.int(seq)).run()
        }
    }
}
