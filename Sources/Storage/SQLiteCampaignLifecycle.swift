/// The campaign lifecycle in SQLite: pause, resume, cancel, closing what a cancel or an
/// expiry left unsent, `campaign.finished` events, and retention. Every write is its own
/// short transaction: a big campaign is closed and purged in batches, so nothing holds
/// the write lock for long and whoever writes next (intake, the dispatcher, another
/// process's CLI) waits at most one batch.
extension SQLiteCampaignStorage {
    public func changeLifecycle(id: String, _ action: LifecycleAction, now: Double) throws(StorageError) -> LifecycleOutcome {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> LifecycleOutcome in
                guard let summary = try Self.campaign(db, id: id) else { return .notFound }
                let target: CampaignControl
                switch summary.decide(action, at: now) {
                case .answer(let outcome): return outcome
                case .set(let control): target = control
                }
                try db.statement("UPDATE campaigns SET control = ?, controlled_at = ? WHERE seq = ?")
                    .bind(.integer(target.rawValue), .double(now), .int(summary.seq)).run()
                var changed = summary
                changed.control = target
                changed.controlledAt = now
                return .changed(changed)
            }
        }
    }

    /// Ends up to `limit` unsent devices of cancelled campaigns (`cancelled`) and of
    /// campaigns past their `expires_at` (`expired`), in one transaction; a lease that
    /// expired on such a campaign ends the same way (its owner is gone). Devices in flight
    /// under a live lease finish first and are recorded as they come back. Returns how many
    /// were ended: call again while it returns `limit`.
    public func closeStopped(now: Double, limit: Int) throws(StorageError) -> Int {
        // Looked for on the reader first: almost every dispatcher turn finds nothing and writes nothing.
        let anyStopped = try reading { db throws(StorageError) -> Bool in
            let find = try db.statement("""
                SELECT 1 FROM campaigns INDEXED BY campaigns_unfinished
                WHERE finished_at IS NULL AND (control = 2 OR expires_at <= ?) LIMIT 1
                """).bind(.double(now))
            return try find.step()
        }
        guard anyStopped, limit > 0 else { return 0 }
        return try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> Int in
                let stopped = try db.statement("""
                    SELECT seq, control FROM campaigns INDEXED BY campaigns_unfinished
                    WHERE finished_at IS NULL AND (control = 2 OR expires_at <= ?) ORDER BY seq
                    """).bind(.double(now))
                var campaigns: [(Int64, DeliveryState)] = []
                while try stopped.step() {
                    campaigns.append((stopped.int(0), stopped.int(1) == Int64(CampaignControl.cancelled.rawValue) ? .cancelled : .expired))
                }
                stopped.reset()
                var ended = 0
                var tally = StateTally()
                for (seq, final) in campaigns where ended < limit {
                    var rows: [(Int, DeliveryState)] = []
                    let waiting = try db.statement("""
                        SELECT idx, state FROM deliveries INDEXED BY deliveries_due
                        WHERE campaign = ? AND state IN (0, 2) LIMIT ?
                        """).bind(.int(seq), .integer(limit - ended))
                    while try waiting.step() {
                        rows.append((Int(waiting.int(0)), DeliveryState(rawValue: Int(waiting.int(1))) ?? .pending))
                    }
                    waiting.reset()
                    let abandoned = try db.statement("""
                        SELECT idx FROM deliveries INDEXED BY deliveries_in_flight
                        WHERE campaign = ? AND state = 1 AND lease_until <= ? LIMIT ?
                        """).bind(.int(seq), .double(now), .integer(max(0, limit - ended - rows.count)))
                    while try abandoned.step() { rows.append((Int(abandoned.int(0)), .inFlight)) }
                    abandoned.reset()
                    for (index, from) in rows {
                        // The fencing number moves on: a late answer for it records nothing.
                        try db.statement("""
                            UPDATE deliveries SET state = ?, finished_at = ?, lease = lease + 1, lease_owner = NULL, lease_until = NULL
                            WHERE campaign = ? AND idx = ?
                            """).bind(.integer(final.rawValue), .double(now), .int(seq), .integer(index)).run()
                        tally.move(seq, from: from, to: final)
                    }
                    ended += rows.count
                    let fromSegments = try closeSegments(db, campaign: seq, as: final, limit: limit - ended, now: now, tally: &tally)
                    ended += fromSegments
                    if !rows.isEmpty || fromSegments > 0 {
                        try Self.settle(db, campaign: seq, finished: rows.count + fromSegments, now: now)
                    } else if try Self.isEmptyAndUnfinished(db, campaign: seq) {
                        // Nothing left to end (a campaign cancelled while being filled): it finishes.
                        try Self.settle(db, campaign: seq, finished: 0, now: now)
                    }
                }
                try tally.apply(db)
                return ended
            }
        }
    }

    /// Ends up to `limit` open devices of a stopped campaign's segments: every open position
    /// of a segment no live lease holds (the lease, if any, is fenced off), and the positions
    /// a live lease has not handed out yet (what it handed finishes first and is recorded).
    private func closeSegments(_ db: SQLiteDatabase, campaign seq: Int64, as final: DeliveryState, limit: Int, now: Double,
                               tally: inout StateTally) throws(StorageError) -> Int {
        guard limit > 0 else { return 0 }
        let code: SegmentCode = final == .cancelled ? .cancelled : .expired
        var ended = 0
        var after: Int64 = -1
        while ended < limit {
            let open = try db.statement("""
                SELECT seg FROM segment_state INDEXED BY segment_state_open WHERE campaign = ? AND open = 1 AND seg > ? ORDER BY seg LIMIT 64
                """).bind(.int(seq), .int(after))
            var segs: [Int64] = []
            while try open.step() { segs.append(open.int(0)) }
            open.reset()
            guard let last = segs.last else { break }
            for seg in segs where ended < limit {
                guard var state = try Self.loadSegment(db, campaign: seq, seg: seg) else { continue }
                let live = state.isLive(now: now)
                var changed = false
                if !live && state.leaseOwner != nil {
                    // Its holder is gone: a late answer for it records nothing.
                    state.lease += 1
                    state.leaseOwner = nil
                    state.leaseUntil = nil
                    state.progress.handed = 0
                    changed = true
                }
                for p in (live ? state.progress.handed : 0)..<state.count where ended < limit {
                    guard state.progress.codes[p] == SegmentCode.open.rawValue else { continue }
                    state.progress.codes[p] = code.rawValue
                    tally.move(seq, from: p < state.progress.reached ? .inFlight : .pending, to: final)
                    ended += 1
                    changed = true
                }
                if state.progress.isSettled {
                    state.isOpen = false
                    state.leaseOwner = nil
                    state.leaseUntil = nil
                }
                if changed { try Self.saveSegment(db, state, now: now) }
            }
            after = last
        }
        return ended
    }

    static func isEmptyAndUnfinished(_ db: SQLiteDatabase, campaign seq: Int64) throws(StorageError) -> Bool {
        let find = try db.statement("SELECT remaining <= 0 AND finished_at IS NULL FROM campaigns WHERE seq = ?").bind(.int(seq))
        defer { find.reset() }
        return try find.step() && find.int(0) != 0
    }

    /// `finished` devices of the campaign reached a final state: it finishes (and its
    /// `campaign.finished` event is queued) when none is left.
    static func settle(_ db: SQLiteDatabase, campaign seq: Int64, finished: Int, now: Double) throws(StorageError) {
        // `finished_at` is written only when it changes: setting it (even to NULL again)
        // rewrites the campaign's entries in the finished/unfinished indexes every turn.
        try db.statement("UPDATE campaigns SET remaining = remaining - ? WHERE seq = ?").bind(.integer(finished), .int(seq)).run()
        let left = try db.statement("SELECT remaining, finished_at IS NOT NULL FROM campaigns WHERE seq = ?").bind(.int(seq))
        guard try left.step() else { left.reset(); return }
        let (done, wasFinished) = (left.int(0) <= 0, left.int(1) != 0)
        left.reset()
        if done {
            try db.statement("UPDATE campaigns SET finished_at = ? WHERE seq = ?").bind(.double(now), .int(seq)).run()
            try recordFinished(db, campaign: seq)
        } else if wasFinished {
            try db.statement("UPDATE campaigns SET finished_at = NULL WHERE seq = ?").bind(.int(seq)).run()
        }
    }

    /// Queues the `campaign.finished` event (in the transaction that finished it).
    static func recordFinished(_ db: SQLiteDatabase, campaign seq: Int64) throws(StorageError) {
        try db.statement("INSERT INTO campaign_events(campaign) VALUES (?)").bind(.int(seq)).run()
    }

    /// Whether a retry of this campaign's device would be pointless: cancelled, or past
    /// its expiry. The state such a device ends in instead, else nil.
    static func stoppedState(_ db: SQLiteDatabase, campaign seq: Int64, now: Double) throws(StorageError) -> DeliveryState? {
        let find = try db.statement("SELECT control, expires_at FROM campaigns WHERE seq = ?").bind(.int(seq))
        defer { find.reset() }
        guard try find.step() else { return nil }
        if find.int(0) == Int64(CampaignControl.cancelled.rawValue) { return .cancelled }
        if let expires = find.optionalDouble(1), expires <= now { return .expired }
        return nil
    }

    // MARK: campaign.finished events

    public func pendingCampaignEvents(limit: Int) throws(StorageError) -> [CampaignEvent] {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> [CampaignEvent] in
                // As for dead tokens: the open batch exactly as first formed, else the next one.
                guard let batch = try Self.openBatch(db, table: "campaign_events", limit: limit) else { return [] }
                let page = try db.statement("SELECT seq, campaign FROM campaign_events WHERE batch = ? ORDER BY seq").bind(.int(batch))
                var rows: [(Int64, Int64)] = []
                while try page.step() { rows.append((page.int(0), page.int(1))) }
                page.reset()
                var events: [CampaignEvent] = []
                for (seq, campaign) in rows {
                    // A finished campaign no longer changes: the body is the same on every retry.
                    if let summary = try Self.campaign(db, seq: campaign) { events.append(CampaignEvent(seq: seq, campaign: summary)) }
                }
                return events
            }
        }
    }

    /// The batch of a webhook outbox table (`feedback_outbox`, `campaign_events`) not yet
    /// acknowledged, exactly as first formed (same rows, same id on every retry and after a
    /// restart); else the next one is formed from the first `limit` rows. nil: empty.
    static func openBatch(_ db: SQLiteDatabase, table: String, limit: Int) throws(StorageError) -> Int64? {
        let open = try db.statement("SELECT min(batch) FROM \(table) WHERE batch IS NOT NULL")
        let formed = try open.step() ? open.optionalInt(0) : nil
        open.reset()
        if let formed { return formed }
        try db.statement("""
            UPDATE \(table) SET batch = (SELECT min(seq) FROM \(table))
            WHERE seq IN (SELECT seq FROM \(table) ORDER BY seq LIMIT ?)
            """).bind(.integer(limit)).run()
        let first = try db.statement("SELECT min(seq) FROM \(table)")
        defer { first.reset() }
        return try first.step() ? first.optionalInt(0) : nil
    }

    public func acknowledgeCampaignEvents(through seq: Int64) throws(StorageError) {
        try writing { db throws(StorageError) in
            try db.statement("DELETE FROM campaign_events WHERE seq <= ?").bind(.int(seq)).run()
        }
    }

    // MARK: Retention

    public func purgeFinished(before cutoff: Double, limit: Int) throws(StorageError) -> PurgeProgress {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> PurgeProgress in
                var progress = PurgeProgress()
                let oldest = try db.statement("""
                    SELECT seq, id FROM campaigns INDEXED BY campaigns_finished
                    WHERE finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT 2
                    """).bind(.double(cutoff))
                var found: [(Int64, String)] = []
                while try oldest.step() { found.append((oldest.int(0), oldest.text(1))) }
                oldest.reset()
                guard let (seq, id) = found.first else { return progress }
                try db.statement("""
                    DELETE FROM deliveries WHERE campaign = ?1 AND idx IN (SELECT idx FROM deliveries WHERE campaign = ?1 ORDER BY idx LIMIT ?2)
                    """).bind(.int(seq), .integer(limit)).run()
                progress.deliveries = db.changes
                // Then its segments (at least one a pass), each device without a row (those were
                // counted above) counted toward `limit`.
                var segmentsLeft = false
                if progress.deliveries < limit {
                    let segs = try db.statement("SELECT seg, codes FROM segment_state WHERE campaign = ? ORDER BY seg LIMIT ?")
                        .bind(.int(seq), .integer(limit - progress.deliveries + 1))
                    var gone: [Int64] = []
                    var budget = limit - progress.deliveries
                    while try segs.step() {
                        let n = segs.blob(1).reduce(0) { $1 == SegmentCode.row.rawValue ? $0 : $0 + 1 }
                        if !gone.isEmpty && n > budget {
                            segmentsLeft = true
                            break
                        }
                        gone.append(segs.int(0))
                        budget -= n
                        progress.deliveries += n
                    }
                    segs.reset()
                    for seg in gone {
                        try db.statement("DELETE FROM segments WHERE campaign = ? AND seg = ?").bind(.int(seq), .int(seg)).run()
                        try db.statement("DELETE FROM segment_state WHERE campaign = ? AND seg = ?").bind(.int(seq), .int(seg)).run()
                    }
                    if !segmentsLeft, !gone.isEmpty {
                        let more = try db.statement("SELECT EXISTS(SELECT 1 FROM segment_state WHERE campaign = ?)").bind(.int(seq))
                        segmentsLeft = try more.step() && more.int(0) != 0
                        more.reset()
                    }
                }
                if progress.deliveries < limit && !segmentsLeft {
                    // Its last rows are gone: the campaign, its counts, keys and events go too.
                    // Dead tokens stay: they are what keeps later campaigns from sending to them.
                    try db.statement("DELETE FROM campaign_counts WHERE campaign = ?").bind(.int(seq)).run()
                    try db.statement("DELETE FROM campaign_events WHERE campaign = ?").bind(.int(seq)).run()
                    try db.statement("DELETE FROM campaign_parts WHERE campaign = ?").bind(.int(seq)).run()
                    try db.statement("DELETE FROM idempotency_keys WHERE campaign_id = ?").bind(.text(id)).run()
                    try db.statement("DELETE FROM campaigns WHERE seq = ?").bind(.int(seq)).run()
                    progress.campaigns = 1
                    progress.more = found.count > 1
                } else {
                    progress.more = true
                }
                return progress
            }
        }
    }

    public var reclaimsFreePages: Bool { true }

    public func reclaimFreePages(maxPages: Int) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            let before = try Self.pageStatistics(db).freePages
            guard before > 0 else { return 0 }
            // Runs to completion as one statement: each page given back is one step.
            try db.execute("PRAGMA incremental_vacuum(\(max(1, maxPages)))")
            return before - (try Self.pageStatistics(db).freePages)
        }
    }

    public func pageStatistics() throws(StorageError) -> PageStatistics {
        try reading { db throws(StorageError) in try Self.pageStatistics(db) }
    }

    static func pageStatistics(_ db: SQLiteDatabase) throws(StorageError) -> PageStatistics {
        func pragma(_ name: String) throws(StorageError) -> Int {
            let read = try db.statement("PRAGMA \(name)")
            defer { read.reset() }
            return try read.step() ? Int(read.int(0)) : 0
        }
        return PageStatistics(pages: try pragma("page_count"), freePages: try pragma("freelist_count"), pageSize: try pragma("page_size"))
    }
}
