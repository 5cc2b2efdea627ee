#if canImport(Glibc)
import Glibc
#endif
import Storage

/// The campaign lifecycle in PostgreSQL: pause, resume, cancel, closing what a cancel or
/// an expiry left unsent, `campaign.finished` events (each batch sent by one instance), and
/// retention. Like SQLite's, every write is a short transaction over at most one batch.
extension PostgresCampaignStorage {
    public func changeLifecycle(id: String, _ action: LifecycleAction, now: Double) throws(StorageError) -> LifecycleOutcome {
        try transaction { db throws(StorageError) -> LifecycleOutcome in
            // The row lock orders two operators acting on one campaign through two instances.
            let locked = try db.execute("SELECT seq FROM campaigns WHERE id = $1 FOR UPDATE", [.text(id)])
            guard locked.rows > 0, let summary = try Self.campaign(db, seq: locked.int(0, 0)) else { return .notFound }
            let target: CampaignControl
            switch summary.decide(action, at: now) {
            case .answer(let outcome): return outcome
            case .set(let control): target = control
            }
            try db.execute("UPDATE campaigns SET control = $1, controlled_at = $2 WHERE seq = $3",
                           [.integer(target.rawValue), .double(now), .int(summary.seq)])
            var changed = summary
            changed.control = target
            changed.controlledAt = now
            return .changed(changed)
        }
    }

    /// Ends up to `limit` unsent devices of cancelled and expired campaigns, skipping rows
    /// another instance holds; a lease that expired on such a campaign ends the same way.
    /// Also finishes any campaign whose last device was recorded by a commit whose finish
    /// step did not run (the instance died between the two).
    public func closeStopped(now: Double, limit: Int) throws(StorageError) -> Int {
        let stopped = try reading { db throws(StorageError) -> [(Int64, DeliveryState)] in
            try Self.finishSettled(db, campaigns: nil, now: now)
            let find = try db.execute("""
                SELECT seq, control FROM campaigns
                WHERE finished_at IS NULL AND (control = 2 OR expires_at <= $1) ORDER BY seq
                """, [.double(now)])
            return (0..<find.rows).map { (find.int($0, 0), find.int($0, 1) == Int64(CampaignControl.cancelled.rawValue) ? .cancelled : .expired) }
        }
        guard !stopped.isEmpty, limit > 0 else { return 0 }
        var settled: [Int64] = []
        let ended = try transaction { db throws(StorageError) -> Int in
            settled = []
            var ended = 0
            var tally = StateTally()
            for (seq, final) in stopped where ended < limit {
                // The fencing number moves on: a late answer for it records nothing.
                let rows = try db.execute("""
                    WITH picked AS (
                        SELECT campaign, idx, state FROM deliveries
                        WHERE campaign = $1 AND (state IN (0, 2) OR (state = 1 AND lease_until <= $2))
                        LIMIT $3 FOR UPDATE SKIP LOCKED)
                    UPDATE deliveries d SET state = $4, finished_at = $2, lease = d.lease + 1, lease_owner = NULL, lease_until = NULL
                    FROM picked p WHERE d.campaign = p.campaign AND d.idx = p.idx
                    RETURNING p.state
                    """, [.int(seq), .double(now), .integer(limit - ended), .integer(final.rawValue)])
                for i in 0..<rows.rows {
                    tally.move(seq, from: DeliveryState(rawValue: Int(rows.int(i, 0))) ?? .pending, to: final)
                }
                ended += rows.rows
                if rows.rows > 0 { settled.append(seq) }
            }
            try tally.apply(db)
            return ended
        }
        finishSettled(settled, now: now)
        return ended
    }

    // MARK: Webhook outboxes

    public func pendingCampaignEvents(limit: Int) throws(StorageError) -> [CampaignEvent] {
        try transaction { db throws(StorageError) -> [CampaignEvent] in
            guard let batch = try openBatch(db, table: "campaign_events", limit: limit) else { return [] }
            let page = try db.execute("SELECT seq, campaign FROM campaign_events WHERE batch = $1 ORDER BY seq", [.int(batch)])
            var events: [CampaignEvent] = []
            for i in 0..<page.rows {
                // A finished campaign no longer changes: the body is the same on every retry.
                if let summary = try Self.campaign(db, seq: page.int(i, 1)) { events.append(CampaignEvent(seq: page.int(i, 0), campaign: summary)) }
            }
            return events
        }
    }

    public func acknowledgeCampaignEvents(through seq: Int64) throws(StorageError) {
        try acknowledge(table: "campaign_events", through: seq)
    }

    /// The open batch of a webhook outbox table, exactly as first formed (same rows, same
    /// id on every retry and after a restart), else the next one from the first `limit`
    /// rows; nil when empty or while another instance holds the outbox's sender lease (so
    /// each batch is posted by one instance; a sender that died loses the lease when it
    /// expires). Taking the batch takes or renews the lease.
    func openBatch(_ db: PGConnection, table: String, limit: Int) throws(StorageError) -> Int64? {
        let now = Self.wallSeconds()
        // Serialises the instances forming or taking one outbox's batch (until commit).
        try db.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", [.integer(Int(Int32(bitPattern: 0x7067_6174))), .text(table)])
        let holder = try db.execute("SELECT owner, until FROM webhook_leases WHERE outbox = $1", [.text(table)])
        if holder.rows > 0, holder.text(0, 0) != options.instance, holder.double(0, 1) > now { return nil }
        let open = try db.execute("SELECT min(batch) FROM \(table) WHERE batch IS NOT NULL")
        var batch = open.optionalInt(0, 0)
        if batch == nil {
            try db.execute("""
                UPDATE \(table) SET batch = (SELECT min(seq) FROM \(table))
                WHERE seq IN (SELECT seq FROM \(table) ORDER BY seq LIMIT $1)
                """, [.integer(limit)])
            batch = try db.execute("SELECT min(seq) FROM \(table)").optionalInt(0, 0)
        }
        guard let batch else { return nil }
        try db.execute("""
            INSERT INTO webhook_leases(outbox, owner, until) VALUES ($1, $2, $3)
            ON CONFLICT (outbox) DO UPDATE SET owner = excluded.owner, until = excluded.until
            """, [.text(table), .text(options.instance), .double(now + options.webhookLeaseSeconds)])
        return batch
    }

    /// Deletes what the webhook acknowledged and gives the sender lease back.
    func acknowledge(table: String, through seq: Int64) throws(StorageError) {
        try transaction { db throws(StorageError) in
            try db.execute("DELETE FROM \(table) WHERE seq <= $1", [.int(seq)])
            try db.execute("DELETE FROM webhook_leases WHERE outbox = $1 AND owner = $2", [.text(table), .text(options.instance)])
        }
    }

    static func wallSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    // MARK: Retention

    public func purgeFinished(before cutoff: Double, limit: Int) throws(StorageError) -> PurgeProgress {
        try transaction { db throws(StorageError) -> PurgeProgress in
            var progress = PurgeProgress()
            let oldest = try db.execute("""
                SELECT seq, id FROM campaigns WHERE finished_at IS NOT NULL AND finished_at < $1 ORDER BY finished_at LIMIT 2
                """, [.double(cutoff)])
            guard oldest.rows > 0 else { return progress }
            let seq = oldest.int(0, 0)
            let id = oldest.text(0, 1)
            progress.deliveries = try db.execute("""
                DELETE FROM deliveries WHERE campaign = $1 AND idx IN (SELECT idx FROM deliveries WHERE campaign = $1 ORDER BY idx LIMIT $2)
                """, [.int(seq), .integer(limit)]).changed
            if progress.deliveries < limit {
                // Its last rows are gone: the campaign, its counts, keys and events go too.
                // Dead tokens stay: they are what keeps later campaigns from sending to them.
                try db.execute("DELETE FROM campaign_counts WHERE campaign = $1", [.int(seq)])
                try db.execute("DELETE FROM campaign_events WHERE campaign = $1", [.int(seq)])
                try db.execute("DELETE FROM idempotency_keys WHERE campaign_id = $1", [.text(id)])
                try db.execute("DELETE FROM campaigns WHERE seq = $1", [.int(seq)])
                progress.campaigns = 1
                progress.more = oldest.rows > 1
            } else {
                progress.more = true
            }
            return progress
        }
    }

    /// PostgreSQL keeps no free list to give back page by page: autovacuum makes deleted
    /// rows' space reusable. Nothing to do here (retention does not call it).
    public var reclaimsFreePages: Bool { false }
    public func reclaimFreePages(maxPages: Int) throws(StorageError) -> Int { 0 }

    /// The database's size in blocks (every relation pushgate created); no free-page count.
    public func pageStatistics() throws(StorageError) -> PageStatistics {
        try reading { db throws(StorageError) in
            let size = try db.execute("SELECT pg_database_size(current_database()), current_setting('block_size')::bigint")
            let block = max(1, Int(size.int(0, 1)))
            return PageStatistics(pages: Int(size.int(0, 0)) / block, freePages: 0, pageSize: block)
        }
    }
}
