import Storage

extension PostgresCampaignStorage {
    public func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds time: Int64,
                                          limits: LiveActivityLimits, replacing: String?) throws(StorageError) -> LiveActivityRegistration {
        let refusal = try transaction { db throws(StorageError) -> LiveActivityRegistration? in
            // One app's reports take turns (a lock held to the commit), so two of them cannot
            // both take the last place; a count stops at the limit.
            try db.execute("SELECT pg_advisory_xact_lock(hashtextextended('pushgate.live_activity_tokens/'::text || $1::text, 0))", [.text(token.app)])
            let existing = try db.execute("SELECT kind, activity FROM live_activity_tokens WHERE app = $1 AND token = $2",
                                          [.text(token.app), .text(token.token)])
            let found: (kind: Int64, activity: String)? = existing.rows > 0 ? (existing.int(0, 0), existing.text(0, 1)) : nil
            func count(_ condition: String, _ values: [PGValue], upTo limit: Int) throws(StorageError) -> Int {
                var values = values
                var other = ""
                if let replacing {
                    values.append(.text(replacing))
                    other = " AND token <> $\(values.count)"
                }
                let rows = try db.execute("SELECT count(*) FROM (SELECT 1 FROM live_activity_tokens WHERE \(condition)\(other) LIMIT $\(values.count + 1)) AS capped",
                                          values + [.integer(limit)])
                return Int(rows.int(0, 0))
            }
            if found == nil, limits.perApp < .max,
               try count("app = $1", [.text(token.app)], upTo: limits.perApp) >= limits.perApp {
                return .appFull(limit: limits.perApp)
            }
            let joinsActivity = token.kind == .update
                && (found?.kind != Int64(LiveActivityToken.Kind.update.rawValue) || found?.activity != token.activity)
            if joinsActivity, limits.perActivity < .max,
               try count("app = $1 AND activity = $2 AND kind = 1", [.text(token.app), .text(token.activity)], upTo: limits.perActivity) >= limits.perActivity {
                return .activityFull(limit: limits.perActivity)
            }
            try db.execute("""
                INSERT INTO live_activity_tokens(app, token, kind, activity, registered_at_ms) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (app, token) DO UPDATE SET kind = excluded.kind, activity = excluded.activity,
                    registered_at_ms = greatest(live_activity_tokens.registered_at_ms, excluded.registered_at_ms)
                """, [.text(token.app), .text(token.token), .integer(token.kind.rawValue), .text(token.activity), .int(time)])
            return nil
        }
        if let refusal { return refusal }
        return .registered(revived: try registerToken(token.token, app: token.app, atMilliseconds: time))
    }

    public func purgeLiveActivityTokens(registeredBeforeMilliseconds cutoff: Int64, limit: Int) throws(StorageError) -> Int {
        try transaction { db throws(StorageError) in
            try db.execute("""
                DELETE FROM live_activity_tokens WHERE (app, token) IN
                    (SELECT app, token FROM live_activity_tokens WHERE kind = 1 AND registered_at_ms < $1 LIMIT $2)
                RETURNING token
                """, [.int(cutoff), .integer(max(1, limit))]).rows
        }
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
