extension SQLiteCampaignStorage {
    public func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds time: Int64,
                                          limits: LiveActivityLimits, replacing: String?) throws(StorageError) -> LiveActivityRegistration {
        let refusal = try writing { db throws(StorageError) -> LiveActivityRegistration? in
            // Counted in the write transaction that inserts, so two reports cannot both
            // take the last place. A count stops at the limit (an index range, never more).
            let existing = try db.statement("SELECT kind, activity FROM live_activity_tokens WHERE app = ? AND token = ?")
                .bind(.text(token.app), .text(token.token))
            var found: (kind: Int64, activity: String)?
            if try existing.step() { found = (existing.int(0), existing.text(1)) }
            /// Rows matching, counted up to `limit`.
            func count(_ condition: String, _ values: [SQLiteValue], upTo limit: Int) throws(StorageError) -> Int {
                let (other, skipped): (String, [SQLiteValue]) = replacing.map { (" AND token <> ?", [.text($0)]) } ?? ("", [])
                let rows = try db.statement("SELECT count(*) FROM (SELECT 1 FROM live_activity_tokens WHERE \(condition)\(other) LIMIT ?)")
                for (i, value) in (values + skipped + [.integer(limit)]).enumerated() { rows.bind(value, at: Int32(i + 1)) }
                _ = try rows.step()
                return Int(rows.int(0))
            }
            if found == nil, limits.perApp < .max,
               try count("app = ?", [.text(token.app)], upTo: limits.perApp) >= limits.perApp {
                return .appFull(limit: limits.perApp)
            }
            let joinsActivity = token.kind == .update
                && (found?.kind != Int64(LiveActivityToken.Kind.update.rawValue) || found?.activity != token.activity)
            if joinsActivity, limits.perActivity < .max,
               try count("app = ? AND activity = ? AND kind = 1", [.text(token.app), .text(token.activity)], upTo: limits.perActivity) >= limits.perActivity {
                return .activityFull(limit: limits.perActivity)
            }
            // A token reported again takes its new kind and activity (ActivityKit gives an
            // activity a new update token, and a push-to-start token may become one).
            try db.statement("""
                INSERT INTO live_activity_tokens(app, token, kind, activity, registered_at_ms) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(app, token) DO UPDATE SET kind = excluded.kind, activity = excluded.activity,
                    registered_at_ms = max(live_activity_tokens.registered_at_ms, excluded.registered_at_ms)
                """).bind(.text(token.app), .text(token.token), .integer(token.kind.rawValue), .text(token.activity), .int(time)).run()
            return nil
        }
        if let refusal { return refusal }
        return .registered(revived: try registerToken(token.token, app: token.app, atMilliseconds: time))
    }

    public func purgeLiveActivityTokens(registeredBeforeMilliseconds cutoff: Int64, limit: Int) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.statement("""
                DELETE FROM live_activity_tokens WHERE (app, token) IN
                    (SELECT app, token FROM live_activity_tokens WHERE kind = 1 AND registered_at_ms < ? LIMIT ?)
                """).bind(.int(cutoff), .int(Int64(max(1, limit)))).run()
            return db.changes
        }
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
