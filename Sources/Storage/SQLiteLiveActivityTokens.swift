extension SQLiteCampaignStorage {
    public func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        try writing { db throws(StorageError) in
            // A token reported again takes its new kind and activity (ActivityKit gives an
            // activity a new update token, and a push-to-start token may become one).
            try db.statement("""
                INSERT INTO live_activity_tokens(app, token, kind, activity, registered_at_ms) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(app, token) DO UPDATE SET kind = excluded.kind, activity = excluded.activity,
                    registered_at_ms = max(live_activity_tokens.registered_at_ms, excluded.registered_at_ms)
                """).bind(.text(token.app), .text(token.token), .integer(token.kind.rawValue), .text(token.activity), .int(time)).run()
        }
        return try registerToken(token.token, app: token.app, atMilliseconds: time)
    }

    public func forgetLiveActivityToken(app: String, token: String) throws(StorageError) -> Bool {
        try writing { db throws(StorageError) in
            try db.statement("DELETE FROM live_activity_tokens WHERE app = ? AND token = ?").bind(.text(app), .text(token)).run()
            return db.changes > 0
        }
    }

    public func liveActivityTokens(app: String, activity: String) throws(StorageError) -> [String] {
        try reading { db throws(StorageError) in
            // Dead as for devices: APNs called it dead after it was last registered.
            let rows = try db.statement("""
                SELECT l.token FROM live_activity_tokens l LEFT JOIN tokens t ON t.token = l.token
                WHERE l.app = ? AND l.activity = ? AND l.kind = 1
                  AND NOT (t.dead_at_ms IS NOT NULL AND (t.registered_at_ms IS NULL OR t.registered_at_ms <= t.dead_at_ms))
                ORDER BY l.registered_at_ms, l.token
                """).bind(.text(app), .text(activity))
            var tokens: [String] = []
            while try rows.step() { tokens.append(rows.text(0)) }
            return tokens
        }
    }
}
