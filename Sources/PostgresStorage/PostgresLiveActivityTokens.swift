import Storage

extension PostgresCampaignStorage {
    public func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        try transaction { db throws(StorageError) in
            try db.execute("""
                INSERT INTO live_activity_tokens(app, token, kind, activity, registered_at_ms) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (app, token) DO UPDATE SET kind = excluded.kind, activity = excluded.activity,
                    registered_at_ms = greatest(live_activity_tokens.registered_at_ms, excluded.registered_at_ms)
                """, [.text(token.app), .text(token.token), .integer(token.kind.rawValue), .text(token.activity), .int(time)])
        }
        return try registerToken(token.token, app: token.app, atMilliseconds: time)
    }

    public func forgetLiveActivityToken(app: String, token: String) throws(StorageError) -> Bool {
        try transaction { db throws(StorageError) in
            try db.execute("DELETE FROM live_activity_tokens WHERE app = $1 AND token = $2 RETURNING token", [.text(app), .text(token)]).rows > 0
        }
    }

    public func liveActivityTokens(app: String, activity: String) throws(StorageError) -> [String] {
        try reading { db throws(StorageError) in
            let rows = try db.execute("""
                SELECT l.token FROM live_activity_tokens l LEFT JOIN tokens t ON t.token = l.token
                WHERE l.app = $1 AND l.activity = $2 AND l.kind = 1
                  AND NOT (t.dead_at_ms IS NOT NULL AND (t.registered_at_ms IS NULL OR t.registered_at_ms <= t.dead_at_ms))
                ORDER BY l.registered_at_ms, l.token
                """, [.text(app), .text(activity)])
            return (0..<rows.rows).map { rows.text($0, 0) }
        }
    }
}
