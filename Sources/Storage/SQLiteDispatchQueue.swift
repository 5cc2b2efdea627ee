/// The dispatcher's side of the SQLite storage: claim, record, recover.
extension SQLiteCampaignStorage {
    public func claim(limit: Int, lease: LeaseTerms, now: Double) throws(StorageError) -> [ClaimedDelivery] {
        try recordAndClaim([], claimLimit: limit, lease: lease, now: now)
    }

    public func recordAndClaim(_ updates: [DeliveryUpdate], claimLimit: Int, lease: LeaseTerms,
                               now: Double, holds: ClaimHolds) throws(StorageError) -> [ClaimedDelivery] {
        guard !updates.isEmpty || claimLimit > 0 else { return [] }
        return try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> [ClaimedDelivery] in
                _ = try recordRows(db, updates, now: now)
                return claimLimit > 0 ? try claimRows(db, limit: claimLimit, lease: lease, now: now, holds: holds) : []
            }
        }
    }

    public func renewLeases(_ lease: LeaseTerms, now: Double) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.statement("""
                UPDATE deliveries INDEXED BY deliveries_lease_expiry SET lease_until = ?
                WHERE state = 1 AND lease_until > ? AND lease_owner = ?
                """).bind(.double(now + lease.seconds), .double(now), .text(lease.owner)).run()
            let rows = db.changes
            try db.statement("""
                UPDATE segment_state INDEXED BY segment_state_leased SET lease_until = ?
                WHERE open = 1 AND lease_owner IS NOT NULL AND lease_owner = ? AND lease_until > ?
                """).bind(.double(now + lease.seconds), .text(lease.owner), .double(now)).run()
            return rows + db.changes
        }
    }

    /// Campaigns whose devices may be sent now: not finished, not paused or cancelled, past
    /// their `send_at`, before their `expires_at`, not being filled in parts. In each lane the one served longest ago
    /// comes first (round-robin), then the oldest.
    static let sendableCampaigns = """
        SELECT seq, lane, rate_per_second, rate_paid_until, served_turn, app, environment, dry_run, segment_size
        FROM campaigns INDEXED BY campaigns_unfinished
        WHERE finished_at IS NULL AND control = 0 AND filling = 0 AND (send_at IS NULL OR send_at <= ?1) AND (expires_at IS NULL OR expires_at > ?1)
        ORDER BY served_turn, seq
        """

    private func claimRows(_ db: SQLiteDatabase, limit: Int, lease: LeaseTerms, now: Double,
                           holds: ClaimHolds) throws(StorageError) -> [ClaimedDelivery] {
        var claimed: [ClaimedDelivery] = []
        var tally = StateTally()
        let sendable = try db.statement(Self.sendableCampaigns).bind(.double(now))
        var candidates: [FairClaim.Candidate] = []
        var lastTurn: Int64 = 0
        // A held route's campaigns wait where they are; asked once per route per claim.
        var held: [CampaignRoute: Bool] = [:]
        var segmentSizes: [Int64: Int] = [:]
        while try sendable.step() {
            lastTurn = max(lastTurn, sendable.int(4))
            let route = CampaignRoute(app: sendable.text(5), environment: sendable.text(6), dryRun: sendable.int(7) != 0)
            if held[route] == nil { held[route] = holds.isHeld(route) }
            guard held[route] == false else { continue }
            segmentSizes[sendable.int(0)] = Int(sendable.int(8))
            candidates.append(FairClaim.Candidate(seq: sendable.int(0), lane: Lane(rawValue: Int(sendable.int(1))) ?? .bulk,
                                                  ratePerSecond: sendable.optionalDouble(2), paidUntil: sendable.optionalDouble(3), now: now))
        }
        sendable.reset()
        guard !candidates.isEmpty else { return [] }
        var fair = FairClaim(candidates)
        // The campaigns that have an expired lease (none in steady state): asked once.
        var lapsed: Set<Int64> = []
        let lapsedRows = try db.statement("""
            SELECT DISTINCT campaign FROM deliveries INDEXED BY deliveries_lease_expiry WHERE state = 1 AND lease_until <= ?
            """).bind(.double(now))
        while try lapsedRows.step() { lapsed.insert(lapsedRows.int(0)) }
        lapsedRows.reset()
        // Due devices, shared out by lane and campaign (each batch marked at once, so a
        // later pass of the share cannot find the same rows again). A takeover is a send
        // like any other: it counts against the campaign's share and rate.
        // A campaign with a segment that does not decode: failed after the share, nothing of it sent.
        var corrupt: [Int64: SegmentDecodeError] = [:]
        try fair.share(limit: limit) { (campaign, n) throws(StorageError) -> Int in
            let before = claimed.count
            var got = try takeDue(db, campaign: campaign, limit: n, now: now, lapsed: lapsed.contains(campaign),
                                  into: &claimed, tally: &tally)
            try mark(db, claimed[before...], lease: lease, now: now)
            // Then its segments: a segmented campaign's exception rows (retries, devices given
            // back) come first, then what its segments have not handed out yet.
            if got < n, segmentSizes[campaign, default: 0] > 0 {
                switch try takeFromSegments(db, campaign: campaign, limit: n - got, lease: lease, now: now, into: &claimed, tally: &tally) {
                case .success(let more): got += more
                case .failure(let error):
                    corrupt[campaign] = error
                    return 0
                }
            }
            return got
        }
        // The campaigns served move to the back of their lane; a capped one pays for its sends.
        for candidate in fair.served {
            try db.statement("UPDATE campaigns SET served_turn = ?, rate_paid_until = ? WHERE seq = ?")
                .bind(.int(lastTurn + 1), candidate.paidUntil.map { .double($0) } ?? .null, .int(candidate.seq)).run()
        }
        try tally.apply(db)
        for (campaign, error) in corrupt.sorted(by: { $0.key < $1.key }) {
            claimed.removeAll { $0.campaign == campaign }
            try failCorrupt(db, campaign: campaign, error, now: now)
        }
        return claimed
    }

    /// In flight under `lease` (attempt + 1, fencing number + 1).
    private func mark(_ db: SQLiteDatabase, _ claims: some Collection<ClaimedDelivery>, lease: LeaseTerms, now: Double) throws(StorageError) {
        let sql = """
            UPDATE deliveries SET state = 1, attempts = attempts + 1, lease = lease + 1, lease_owner = ?, lease_until = ?
            WHERE campaign = ? AND idx = ?
            """
        for delivery in claims {
            try db.statement(sql).bind(.text(lease.owner), .double(now + lease.seconds), .int(delivery.campaign), .integer(delivery.index)).run()
        }
    }

    /// Up to `limit` due devices of one campaign: leases that expired (their owner died or
    /// hung) first, then retries that are due (their own index), then pending devices in
    /// order. Returns how many.
    /// `lapsed`: the campaign has a lease that expired.
    private func takeDue(_ db: SQLiteDatabase, campaign: Int64, limit: Int, now: Double, lapsed: Bool,
                         into claimed: inout [ClaimedDelivery], tally: inout StateTally) throws(StorageError) -> Int {
        var got = 0
        if lapsed {
            let expired = try db.statement("""
                SELECT idx, token, body, attempts, lease FROM deliveries INDEXED BY deliveries_lease_expiry
                WHERE state = 1 AND lease_until <= ? AND campaign = ? ORDER BY lease_until LIMIT ?
                """).bind(.double(now), .int(campaign), .integer(limit))
            while try expired.step() {
                claimed.append(ClaimedDelivery(campaign: campaign, index: Int(expired.int(0)), token: expired.text(1),
                                               body: expired.optionalBlob(2), attempt: Int(expired.int(3)) + 1, lease: expired.int(4) + 1))
                got += 1
            }
            expired.reset()
        }
        // Each partial index's own condition is written out: SQLite uses one only when the
        // query's WHERE contains it.
        for (index, condition, state) in [("deliveries_retry", "state = 2", DeliveryState.retrying),
                                          ("deliveries_due", "state IN (0, 2) AND state = 0", .pending)] where got < limit {
            let due = try db.statement("""
                SELECT idx, token, body, attempts, lease FROM deliveries INDEXED BY \(index)
                WHERE campaign = ? AND \(condition) AND next_at <= ? ORDER BY next_at, idx LIMIT ?
                """).bind(.int(campaign), .double(now), .integer(limit - got))
            while try due.step() {
                claimed.append(ClaimedDelivery(campaign: campaign, index: Int(due.int(0)), token: due.text(1),
                                               body: due.optionalBlob(2), attempt: Int(due.int(3)) + 1, lease: due.int(4) + 1))
                tally.move(campaign, from: state, to: .inFlight)
                got += 1
            }
            due.reset()
        }
        return got
    }

    public func message(campaign seq: Int64) throws(StorageError) -> CampaignMessage? {
        try reading { db throws(StorageError) in
            let find = try db.statement("""
                SELECT id, dry_run, push_type, topic, priority, expiration, collapse_id, body, apns_id_prefix, app, environment, channel
                FROM campaigns WHERE seq = ?
                """).bind(.int(seq))
            guard try find.step() else { return nil }
            let message = StoredMessage(pushType: find.text(2), topic: find.text(3), priority: Int(find.int(4)),
                                        expiration: find.optionalInt(5), collapseId: find.optionalText(6),
                                        channel: find.optionalText(11))
            return CampaignMessage(id: find.text(0), dryRun: find.int(1) != 0, message: message,
                                   body: find.blob(7), apnsIDPrefix: find.text(8), app: find.text(9), environment: find.text(10))
        }
    }

    @discardableResult
    public func record(_ updates: [DeliveryUpdate], now: Double) throws(StorageError) -> Int {
        guard !updates.isEmpty else { return 0 }
        return try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> Int in try recordRows(db, updates, now: now) }
        }
    }

    private func recordRows(_ db: SQLiteDatabase, _ updates: [DeliveryUpdate], now: Double) throws(StorageError) -> Int {
        var count = 0
        var tally = StateTally()
        /// An update that recorded: counts, the campaign's progress, dead tokens.
        func counted(_ update: DeliveryUpdate) throws(StorageError) {
            count += 1
            tally.move(update.campaign, from: .inFlight, to: update.state)
            if update.state == .unregistered {
                try recordDead(db, update: update, now: now)
            } else if update.state == .failed, update.reason == "BadDeviceToken",
                      try db.statement("SELECT push_type FROM campaigns WHERE seq = ?").bind(.int(update.campaign)).firstText() == "liveactivity" {
                // A 400 BadDeviceToken kills a Live Activity token (ActivityKit hands out a
                // new one), not a device token (often a token of the other environment).
                try recordDead(db, update: update, now: now)
            }
        }
        var stopped: [Int64: DeliveryState?] = [:]
        var recorded: [Int64: RecordedCampaign?] = [:]
        // Each segment touched: read once, changed in memory, written once; by slot, looked
        // up once per run of a segment.
        var slots = KeyedSlots<SegmentKey>()
        var segments: [SegmentState] = []
        var changed: [Bool] = []
        var last: (seq: Int64, campaign: RecordedCampaign?)?
        for var update in updates {
            // A retry of a cancelled or expired campaign's device would never be sent: it ends now.
            if update.state == .retrying {
                if stopped[update.campaign] == nil { stopped[update.campaign] = try Self.stoppedState(db, campaign: update.campaign, now: now) }
                if let state = stopped[update.campaign] ?? nil {
                    update.state = state
                    update.nextAttemptAt = nil
                }
            }
            if last?.seq != update.campaign {
                if recorded[update.campaign] == nil { recorded[update.campaign] = try Self.recordedCampaign(db, campaign: update.campaign) }
                last = (update.campaign, recorded[update.campaign] ?? nil)
            }
            guard let campaign = last?.campaign else { continue }
            if campaign.segmentSize > 0 {
                let seg = Int64(update.index / campaign.segmentSize)
                let p = update.index % campaign.segmentSize
                let key = SegmentKey(campaign: update.campaign, seg: seg)
                let slot: Int
                if let known = slots.slot(of: key) {
                    slot = known
                } else {
                    guard let state = try Self.loadSegment(db, campaign: key.campaign, seg: key.seg) else { continue }
                    slot = slots.add(key)
                    segments.append(state)
                    changed.append(false)
                }
                guard p < segments[slot].count else { continue }
                // Read in place, never copied out: a copy would duplicate the codes at every update.
                let code = SegmentCode(rawValue: segments[slot].progress.codes[p])
                if code != .row {
                    // Only the current lease records, once: a stale fence or a coded device is ignored.
                    guard code == .open, segments[slot].isOpen, update.lease == segments[slot].lease else { continue }
                    let plain = SegmentCode.plain(for: update, apnsIDPrefix: campaign.apnsIDPrefix)
                    if plain == nil {
                        try insertExceptionRow(db, update, seg: seg, count: segments[slot].count, fence: segments[slot].lease, position: p, now: now)
                    }
                    segments[slot].progress.codes[p] = (plain ?? .row).rawValue
                    changed[slot] = true
                    try counted(update)
                    continue
                }
            }
            // Only the current lease records: a late answer from a lease that expired and was
            // taken over (or a duplicate) cannot overwrite, undo a final state or count twice.
            try db.statement("""
                UPDATE deliveries SET state = ?, status = ?, reason = ?, apns_id = ?, apns_unique_id = ?, timestamp_ms = ?,
                    next_at = ?, finished_at = ?, attempts = attempts - ?, lease_owner = NULL, lease_until = NULL
                WHERE campaign = ? AND idx = ? AND state = 1 AND lease = ?
                """)
                .bind(.integer(update.state.rawValue), .optional(update.status.map(Int64.init)), .optional(update.reason),
                      .optional(update.apnsID), .optional(update.apnsUniqueID), .optional(update.timestampMilliseconds),
                      .double(update.nextAttemptAt ?? now), update.state.isFinal ? .double(now) : .null, .integer(update.refundAttempt ? 1 : 0),
                      .int(update.campaign), .integer(update.index), .int(update.lease)).run()
            guard db.changes == 1 else { continue }
            try counted(update)
        }
        // A segment with no open code left is settled: it leaves the open index, its lease ends.
        for slot in segments.indices where changed[slot] {
            var state = segments[slot]
            if state.isOpen && state.progress.isSettled {
                state.isOpen = false
                state.leaseOwner = nil
                state.leaseUntil = nil
            }
            try Self.saveSegment(db, state, now: now)
        }
        try tally.apply(db)
        for (seq, finished) in tally.totals(where: \.isFinal) where finished > 0 {
            try Self.settle(db, campaign: seq, finished: finished, now: now)
        }
        return count
    }

    /// A 410: the token is dead as of Apple's timestamp (or now, when Apple gave none),
    /// unless an earlier answer already recorded a later death; queued for the webhook.
    private func recordDead(_ db: SQLiteDatabase, update: DeliveryUpdate, now: Double) throws(StorageError) {
        guard let token = try db.statement("SELECT token FROM deliveries WHERE campaign = ? AND idx = ?")
            .bind(.int(update.campaign), .integer(update.index)).firstText() else { return }
        // The token is dead for the app whose campaign learnt it.
        let app = try db.statement("SELECT app FROM campaigns WHERE seq = ?").bind(.int(update.campaign)).firstText() ?? ""
        let timestamp = update.timestampMilliseconds ?? Int64(now * 1000)
        let reason = update.reason ?? "Unregistered"
        try db.statement("""
            INSERT INTO tokens(token, dead_at_ms, dead_reason, recorded_at, app) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(token) DO UPDATE SET dead_at_ms = excluded.dead_at_ms, dead_reason = excluded.dead_reason,
                recorded_at = excluded.recorded_at, app = excluded.app
            WHERE tokens.dead_at_ms IS NULL OR excluded.dead_at_ms > tokens.dead_at_ms
            """).bind(.text(token), .int(timestamp), .text(reason), .double(now), .text(app)).run()
        try db.statement("INSERT INTO feedback_outbox(token, timestamp_ms, reason) VALUES (?, ?, ?)")
            .bind(.text(token), .int(timestamp), .text(reason)).run()
    }

    public func requeueInFlight() throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> Int in
                // The fencing number moves on too: nothing the dead owner sent can be recorded.
                try db.statement("UPDATE deliveries SET state = 0, lease = lease + 1, lease_owner = NULL, lease_until = NULL WHERE state = 1").run()
                var requeued = db.changes
                // Segments: every lease given back and fenced off; the open positions it had
                // handed out are pending again (counted as such below).
                var held: [(Int64, Int64)] = []
                let leased = try db.statement("""
                    SELECT campaign, seg FROM segment_state INDEXED BY segment_state_leased WHERE open = 1 AND lease_owner IS NOT NULL
                    """)
                while try leased.step() { held.append((leased.int(0), leased.int(1))) }
                leased.reset()
                for (campaign, seg) in held {
                    guard var state = try Self.loadSegment(db, campaign: campaign, seg: seg) else { continue }
                    requeued += state.progress.codes.prefix(state.progress.reached).reduce(0) { $1 == SegmentCode.open.rawValue ? $0 + 1 : $0 }
                    state.leaseOwner = nil
                    state.leaseUntil = nil
                    state.lease += 1
                    state.progress.handed = 0
                    state.progress.reached = 0
                    try Self.saveSegment(db, state, now: nil)
                }
                if requeued > 0 {
                    // Rare (after a crash): recount the unfinished campaigns from their rows.
                    let unfinished = try db.statement("SELECT seq FROM campaigns INDEXED BY campaigns_unfinished WHERE finished_at IS NULL")
                    var seqs: [Int64] = []
                    while try unfinished.step() { seqs.append(unfinished.int(0)) }
                    unfinished.reset()
                    for seq in seqs { try Self.recount(db, campaign: seq) }
                }
                return requeued
            }
        }
    }

    /// When campaign `c` next has a device due (NULL: none left): its first due row, now
    /// for an unleased open segment or one its holder has not handed out in full, else the
    /// expiry of a lease on an open segment (it is taken over then).
    static let firstDue = """
        (SELECT min(t) FROM (
            SELECT min(next_at) AS t FROM deliveries INDEXED BY deliveries_due WHERE campaign = c.seq AND state IN (0, 2)
            UNION ALL SELECT min(CASE WHEN handed < count THEN ?1 ELSE lease_until END) FROM segment_state INDEXED BY segment_state_leased
                WHERE campaign = c.seq AND open = 1 AND lease_owner IS NOT NULL
            UNION ALL SELECT ?1 WHERE EXISTS (SELECT 1 FROM segment_state INDEXED BY segment_state_open
                WHERE campaign = c.seq AND open = 1 AND lease_owner IS NULL)))
        """

    public func nextDueTime(now: Double) throws(StorageError) -> Double? {
        try reading { db throws(StorageError) in
            // The first due row of each sendable campaign (for a capped one, not before its
            // rate allows the next send), a scheduled campaign's start, an expiry.
            let first = try db.statement("""
                SELECT min(t) FROM (
                    SELECT CASE WHEN c.rate_per_second > 0 AND c.rate_paid_until IS NOT NULL
                                THEN max(\(Self.firstDue), c.rate_paid_until + 1.0 / c.rate_per_second) ELSE \(Self.firstDue) END AS t
                    FROM campaigns c INDEXED BY campaigns_unfinished
                    WHERE c.finished_at IS NULL AND c.control = 0 AND c.filling = 0 AND (c.send_at IS NULL OR c.send_at <= ?1) AND (c.expires_at IS NULL OR c.expires_at > ?1)
                    UNION ALL SELECT send_at FROM campaigns INDEXED BY campaigns_unfinished
                    WHERE finished_at IS NULL AND control = 0 AND filling = 0 AND send_at > ?1
                    UNION ALL SELECT expires_at FROM campaigns INDEXED BY campaigns_unfinished
                    WHERE finished_at IS NULL AND expires_at > ?1)
                """).bind(.double(now))
            return try first.step() ? first.optionalDouble(0) : nil
        }
    }
}

/// A segment of a campaign, as a record groups its updates.
struct SegmentKey: Hashable {
    var campaign: Int64
    var seg: Int64
}

extension SQLiteStatement {
    func firstText() throws(StorageError) -> String? {
        try step() ? text(0) : nil
    }
}
