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
        let stopped = try reading { db throws(StorageError) -> [(seq: Int64, final: DeliveryState, reason: String?, segmentSize: Int)] in
            try Self.finishSettled(db, campaigns: nil, now: now)
            let find = try db.execute("""
                SELECT seq, control, failure IS NOT NULL, segment_size FROM campaigns
                WHERE finished_at IS NULL AND (control = 2 OR expires_at <= $1 OR failure IS NOT NULL) ORDER BY seq
                """, [.double(now)])
            return (0..<find.rows).map { i in
                // A campaign with a segment that does not decode: its open devices fail.
                if find.bool(i, 2) { return (find.int(i, 0), .failed, Self.segmentCorruptReason, Int(find.int(i, 3))) }
                return (find.int(i, 0), find.int(i, 1) == Int64(CampaignControl.cancelled.rawValue) ? .cancelled : .expired, nil, Int(find.int(i, 3)))
            }
        }
        guard !stopped.isEmpty, limit > 0 else { return 0 }
        var settled: [Int64] = []
        let ended = try transaction { db throws(StorageError) -> Int in
            settled = []
            var ended = 0
            var tally = StateTally()
            for (seq, final, reason, segmentSize) in stopped where ended < limit {
                // The fencing number moves on: a late answer for it records nothing.
                let rows = try db.execute("""
                    WITH picked AS (
                        SELECT campaign, idx, state FROM deliveries
                        WHERE campaign = $1 AND (state IN (0, 2) OR (state = 1 AND lease_until <= $2))
                        LIMIT $3 FOR UPDATE SKIP LOCKED)
                    UPDATE deliveries d SET state = $4, finished_at = $2, lease = d.lease + 1, lease_owner = NULL, lease_until = NULL,
                        reason = coalesce($5::text, d.reason)
                    FROM picked p WHERE d.campaign = p.campaign AND d.idx = p.idx
                    RETURNING p.state
                    """, [.int(seq), .double(now), .integer(limit - ended), .integer(final.rawValue), .optional(reason)])
                for i in 0..<rows.rows {
                    tally.move(seq, from: DeliveryState(rawValue: Int(rows.int(i, 0))) ?? .pending, to: final)
                }
                ended += rows.rows
                var changed = rows.rows > 0
                if segmentSize > 0 && ended < limit {
                    let closed = try closeSegments(db, campaign: seq, segmentSize: segmentSize, final: final, reason: reason,
                                                   limit: limit - ended, now: now, tally: &tally)
                    ended += closed
                    changed = changed || closed > 0
                }
                if changed { settled.append(seq) }
            }
            try tally.apply(db)
            return ended
        }
        finishSettled(settled, now: now)
        return ended
    }

    /// Ends the open devices of a stopped campaign's segments, up to about `limit`: those
    /// not handed out, and those handed out under a lease that expired (the fencing number
    /// moves on). Devices in flight under a live lease are left to their holder.
    /// Cancelled and expired devices become codes; failed ones rows with their reason.
    private func closeSegments(_ db: PGConnection, campaign: Int64, segmentSize: Int, final: DeliveryState, reason: String?,
                               limit: Int, now: Double, tally: inout StateTally) throws(StorageError) -> Int {
        var ended = 0
        var after: Int64 = -1
        var exceptions: [(idx: Int, token: String, lease: Int64)] = []
        let code: SegmentCode? = final == .cancelled ? .cancelled : final == .expired ? .expired : nil
        while ended < limit {
            let batch = 16
            let rows = try db.execute("""
                SELECT \(PGSegmentState.columns) FROM segment_state
                WHERE campaign = $1 AND open AND seg > $2 ORDER BY seg LIMIT $3 FOR UPDATE SKIP LOCKED
                """, [.int(campaign), .int(after), .integer(batch)])
            for i in 0..<rows.rows where ended < limit {
                var state = PGSegmentState(rows, i)
                after = state.seg
                let live = state.leaseOwner != nil && (state.leaseUntil ?? 0) > now
                let from = live ? state.handed : 0
                var devices: [SegmentDevice]?
                if code == nil, case .success(let decoded) = try segmentCache.devices(db, campaign: campaign, seg: state.seg, count: state.count),
                   decoded.count == state.count {
                    devices = decoded
                }
                var closed = 0
                for p in from..<state.count where state.codes[p] == SegmentCode.open.rawValue && ended + closed < limit {
                    tally.move(campaign, from: p < state.reached ? .inFlight : .pending, to: final)
                    if let code {
                        state.codes[p] = code.rawValue
                    } else {
                        state.codes[p] = SegmentCode.row.rawValue
                        exceptions.append((Int(state.seg) * segmentSize + p, devices?[p].token ?? "", state.lease + (live ? 0 : 1)))
                    }
                    closed += 1
                }
                if !live {
                    state.lease += 1
                    state.leaseOwner = nil
                    state.leaseUntil = nil
                    state.handed = 0
                }
                if closed > 0 || !live { try state.store(db, campaign: campaign, now: now) }
                ended += closed
            }
            if rows.rows < batch { break }
        }
        if !exceptions.isEmpty {
            try db.execute("""
                INSERT INTO deliveries(campaign, idx, token, state, reason, finished_at, lease)
                SELECT $1, u.idx, u.token, $2, $3, $4, u.lease FROM unnest($5::int[], $6::text[], $7::bigint[]) AS u(idx, token, lease)
                """, [.int(campaign), .integer(final.rawValue), .optional(reason), .double(now),
                      .text(PGArray.integers(exceptions.map { Int64($0.idx) })), .text(PGArray.texts(exceptions.map(\.token))),
                      .text(PGArray.integers(exceptions.map(\.lease)))])
        }
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
        let now = options.clock.wallSeconds()
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

    // MARK: Retention

    public func purgeFinished(before cutoff: Double, limit: Int) throws(StorageError) -> PurgeProgress {
        try transaction { db throws(StorageError) -> PurgeProgress in
            var progress = PurgeProgress()
            let oldest = try db.execute("""
                SELECT seq, id, segment_size FROM campaigns WHERE finished_at IS NOT NULL AND finished_at < $1 ORDER BY finished_at LIMIT 2
                """, [.double(cutoff)])
            guard oldest.rows > 0 else { return progress }
            let seq = oldest.int(0, 0)
            let id = oldest.text(0, 1)
            // Segments first, whole: each counts its devices toward `limit`; then the
            // exception rows, at most `limit` of them per transaction.
            let segmentSize = Int(oldest.int(0, 2))
            var rowLimit = limit
            if segmentSize > 0 {
                let batch = max(1, limit / segmentSize)
                let gone = try db.execute("""
                    DELETE FROM segments WHERE campaign = $1 AND seg IN (SELECT seg FROM segments WHERE campaign = $1 ORDER BY seg LIMIT $2)
                    RETURNING seg, count
                    """, [.int(seq), .integer(batch)])
                if gone.rows > 0 {
                    try db.execute("DELETE FROM segment_state WHERE campaign = $1 AND seg = ANY($2::int[])",
                                   [.int(seq), .text(PGArray.integers((0..<gone.rows).map { gone.int($0, 0) }))])
                }
                progress.deliveries = (0..<gone.rows).reduce(0) { $0 + Int(gone.int($1, 1)) }
                if gone.rows == batch {
                    progress.more = true
                    return progress
                }
                try db.execute("DELETE FROM segment_state WHERE campaign = $1", [.int(seq)])
                try db.execute("DELETE FROM campaign_parts WHERE campaign = $1", [.int(seq)])
                rowLimit = max(1, limit - progress.deliveries)
            }
            let rows = try db.execute("""
                DELETE FROM deliveries WHERE campaign = $1 AND idx IN (SELECT idx FROM deliveries WHERE campaign = $1 ORDER BY idx LIMIT $2)
                """, [.int(seq), .integer(rowLimit)]).changed
            // A segmented campaign's rows are devices its segments counted already.
            if segmentSize == 0 { progress.deliveries = rows }
            if rows < rowLimit {
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
