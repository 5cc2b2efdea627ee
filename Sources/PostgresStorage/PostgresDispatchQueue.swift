import Storage

/// The dispatcher's side of the PostgreSQL storage: claims that skip what another
/// instance holds, results recorded only under the current lease.
extension PostgresCampaignStorage {
    public func claim(limit: Int, lease: LeaseTerms, now: Double) throws(StorageError) -> [ClaimedDelivery] {
        try recordAndClaim([], claimLimit: limit, lease: lease, now: now)
    }

    public func recordAndClaim(_ updates: [DeliveryUpdate], claimLimit: Int, lease: LeaseTerms,
                               now: Double, holds: ClaimHolds) throws(StorageError) -> [ClaimedDelivery] {
        guard !updates.isEmpty || claimLimit > 0 else { return [] }
        let (claim, settled) = try transaction { db throws(StorageError) -> (PendingClaim, [Int64]) in
            // One count update for the results and the claim together.
            var tally = StateTally()
            let recorded = try recordRows(db, updates, now: now, tally: &tally)
            let claim = claimLimit > 0 ? try claimRows(db, limit: claimLimit, lease: lease, now: now, holds: holds, tally: &tally) : PendingClaim()
            try tally.apply(db)
            // A campaign this claim took devices from has them pending or in flight: it
            // cannot be finished now (the commit that records its last ones finishes it).
            let claimedFrom = Set(claim.claimed.map(\.campaign))
            return (claim, recorded.settled.filter { !claimedFrom.contains($0) })
        }
        // Committed: the frontiers move (a claim rolled back leaves them where they were).
        if !claim.frontiers.isEmpty || !claim.gone.isEmpty {
            pendingFrontiers.withLock { frontiers in
                for campaign in claim.gone { frontiers[campaign] = nil }
                for (campaign, frontier) in claim.frontiers where frontiers[campaign].map({ $0 < frontier }) ?? true {
                    frontiers[campaign] = frontier
                }
            }
        }
        finishSettled(settled, now: now)
        return claim.claimed
    }

    /// The last pending device this instance claimed of a campaign (nil: none yet, or the
    /// campaign is finished).
    func pendingFrontier(campaign: Int64) -> PendingFrontier? {
        pendingFrontiers.withLock { $0[campaign] }
    }

    /// Claims up to `$3` devices of campaign `$1` in state `state` due by `$2`, in
    /// (`next_at`, `idx`) order, for lease owner `$4` until `$5`; `afterFrontier`: only
    /// those after (`$6`, `$7`), an index condition of `deliveries_due`, so the scan starts
    /// there rather than at the campaign's first entry.
    static func dueClaim(state: DeliveryState, afterFrontier: Bool) -> String {
        """
        WITH picked AS (
            SELECT campaign, idx, next_at FROM deliveries
            WHERE campaign = $1 AND state = \(state.rawValue) AND next_at <= $2\(afterFrontier ? " AND (next_at, idx) > ($6::float8, $7::int)" : "")
            ORDER BY next_at, idx LIMIT $3 FOR UPDATE SKIP LOCKED)
        UPDATE deliveries d SET state = 1, attempts = d.attempts + 1, lease = d.lease + 1, lease_owner = $4, lease_until = $5
        FROM picked p WHERE d.campaign = p.campaign AND d.idx = p.idx
        RETURNING d.campaign, d.idx, d.token, d.body, d.attempts, d.lease, p.next_at
        """
    }

    @discardableResult
    public func record(_ updates: [DeliveryUpdate], now: Double) throws(StorageError) -> Int {
        guard !updates.isEmpty else { return 0 }
        let recorded = try transaction { db throws(StorageError) in
            var tally = StateTally()
            let recorded = try recordRows(db, updates, now: now, tally: &tally)
            try tally.apply(db)
            return recorded
        }
        finishSettled(recorded.settled, now: now)
        return recorded.counted
    }

    public func renewLeases(_ lease: LeaseTerms, now: Double) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            let values: [PGValue] = [.double(now + lease.seconds), .double(now), .text(lease.owner)]
            let rows = try db.execute("UPDATE deliveries SET lease_until = $1 WHERE state = 1 AND lease_until > $2 AND lease_owner = $3", values).changed
            // Segments held: a claim or record holding one right now is not waited for (it
            // renews the lease itself); the next renewal comes well before the lease ends.
            let segments = try db.execute("""
                UPDATE segment_state SET lease_until = $1
                WHERE (campaign, seg) IN (SELECT campaign, seg FROM segment_state
                                          WHERE open AND lease_owner = $3 AND lease_until > $2 FOR UPDATE SKIP LOCKED)
                """, values).changed
            return rows + segments
        }
    }

    /// Campaigns whose devices may be sent now: not finished, not paused or cancelled, past
    /// their `send_at`, before their `expires_at`, not being filled, not failed. Read in
    /// every claim, so a pause or cancel issued to any instance reaches every instance
    /// within a claim turn. Not locked: instances claim from one campaign at once (its
    /// segments and rows are locked one by one, skipping what another holds), and an
    /// instance frozen inside its claim holds no campaign row but a capped one's. In each
    /// lane the one served longest ago comes first (round-robin).
    static let sendableCampaigns = """
        SELECT seq, lane, rate_per_second, rate_paid_until, served_turn, app, environment, dry_run, segment_size FROM campaigns
        WHERE finished_at IS NULL AND control = 0 AND (send_at IS NULL OR send_at <= $1) AND (expires_at IS NULL OR expires_at > $1)
          AND NOT filling AND failure IS NULL
        ORDER BY seq
        """

    /// What one claim took, and how the frontiers move once it commits.
    struct PendingClaim {
        var claimed: [ClaimedDelivery] = []
        /// The last pending device claimed, per campaign.
        var frontiers: [Int64: PendingFrontier] = [:]
        /// Campaigns with a frontier that are finished or gone.
        var gone: [Int64] = []
        /// Segments that did not decode (their campaigns failed).
        var corrupt: [SegmentDecodeError] = []
    }

    /// The claim's count changes go to `tally` (applied by the caller, in the same transaction).
    private func claimRows(_ db: PGConnection, limit: Int, lease: LeaseTerms, now: Double,
                           holds: ClaimHolds, tally: inout StateTally) throws(StorageError) -> PendingClaim {
        let sendable = try db.execute(Self.sendableCampaigns, [.double(now)])
        // A capped campaign's rate bucket is read and paid under its row lock, taken without
        // waiting: one another instance is claiming right now is left to it for this turn.
        let capped = (0..<sendable.rows).filter { (sendable.optionalDouble($0, 2) ?? 0) > 0 }.map { sendable.int($0, 0) }
        var buckets: [Int64: Double?] = [:]
        if !capped.isEmpty {
            let locked = try db.execute("SELECT seq, rate_paid_until FROM campaigns WHERE seq = ANY($1::bigint[]) ORDER BY seq FOR UPDATE SKIP LOCKED",
                                        [.text(PGArray.integers(capped))])
            for i in 0..<locked.rows { buckets[locked.int(i, 0)] = locked.optionalDouble(i, 1) }
        }
        let segmentSizes = Dictionary((0..<sendable.rows).map { (sendable.int($0, 0), Int(sendable.int($0, 8))) }, uniquingKeysWith: { a, _ in a })
        var result = PendingClaim()
        let frontiers = pendingFrontiers.withLock { $0 }
        // A frontier of a campaign not sendable now (finished, cancelled, paused, or being
        // claimed by another instance): dropped if the campaign is finished or deleted.
        let sendableSeqs = Set((0..<sendable.rows).map { sendable.int($0, 0) })
        let unsure = frontiers.keys.filter { !sendableSeqs.contains($0) }
        if !unsure.isEmpty {
            let gone = try db.execute("SELECT unnest($1::bigint[]) EXCEPT SELECT seq FROM campaigns WHERE finished_at IS NULL",
                                      [.text(PGArray.integers(unsure))])
            result.gone = (0..<gone.rows).map { gone.int($0, 0) }
        }
        // A held route's campaigns wait where they are; asked once per route per claim.
        var held: [CampaignRoute: Bool] = [:]
        let rows = (0..<sendable.rows).filter { row in
            if (sendable.optionalDouble(row, 2) ?? 0) > 0 && buckets[sendable.int(row, 0)] == nil { return false }
            let route = CampaignRoute(app: sendable.text(row, 5), environment: sendable.text(row, 6), dryRun: sendable.bool(row, 7))
            if held[route] == nil { held[route] = holds.isHeld(route) }
            return held[route] == false
        }.sorted { (sendable.int($0, 4), sendable.int($0, 0)) < (sendable.int($1, 4), sendable.int($1, 0)) }
        var fair = FairClaim(rows.map { i in
            FairClaim.Candidate(seq: sendable.int(i, 0), lane: Lane(rawValue: Int(sendable.int(i, 1))) ?? .bulk,
                                ratePerSecond: sendable.optionalDouble(i, 2), paidUntil: buckets[sendable.int(i, 0)] ?? sendable.optionalDouble(i, 3), now: now)
        })
        let lastTurn = (0..<sendable.rows).map { sendable.int($0, 4) }.max() ?? 0
        guard !fair.seqs.isEmpty else { return result }
        let until = now + lease.seconds
        var claimed: [ClaimedDelivery] = []
        // Due devices, shared out by lane and campaign: a campaign's expired leases first
        // (their owner died or hung; a takeover is a send like any other, so it counts
        // against the campaign's share and rate), then its due retries (their own index),
        // then its pending devices in order. Rows another instance is claiming right now
        // are skipped.
        // The campaigns that have an expired lease (none in steady state): asked once.
        let lapsed = try db.execute("SELECT DISTINCT campaign FROM deliveries WHERE state = 1 AND lease_until <= $1", [.double(now)])
        let lapsedCampaigns = Set((0..<lapsed.rows).map { lapsed.int($0, 0) })
        try fair.share(limit: limit) { (campaign, n) throws(StorageError) -> Int in
            var got = 0
            if lapsedCampaigns.contains(campaign) {
                let expired = try db.execute("""
                    WITH picked AS (
                        SELECT campaign, idx, lease_until FROM deliveries
                        WHERE state = 1 AND lease_until <= $1 AND campaign = $2
                        ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED)
                    UPDATE deliveries d SET attempts = d.attempts + 1, lease = d.lease + 1, lease_owner = $4, lease_until = $5
                    FROM picked p WHERE d.campaign = p.campaign AND d.idx = p.idx
                    RETURNING d.campaign, d.idx, d.token, d.body, d.attempts, d.lease
                    """, [.double(now), .int(campaign), .integer(n), .text(lease.owner), .double(until)])
                claimed += Self.claims(expired).sorted { $0.index < $1.index }
                got = expired.rows
            }
            for state in [DeliveryState.retrying, .pending] where got < n {
                func due(after frontier: PendingFrontier?, _ count: Int) throws(StorageError) -> [(ClaimedDelivery, PendingFrontier)] {
                    var values: [PGValue] = [.int(campaign), .double(now), .integer(count), .text(lease.owner), .double(until)]
                    if let frontier { values += [.double(frontier.nextAt), .int(frontier.index)] }
                    let due = try db.execute(Self.dueClaim(state: state, afterFrontier: frontier != nil), values)
                    return Array(zip(Self.claims(due), (0..<due.rows).map { PendingFrontier(nextAt: due.double($0, 6), index: due.int($0, 1)) }))
                }
                // Pending devices after this instance's frontier; when those are fewer than
                // wanted, from the start too: rows behind it that another instance held when
                // this one passed them and then gave back, or whose claim rolled back.
                let frontier = state == .pending ? frontiers[campaign] : nil
                var rows = try due(after: frontier, n - got)
                if frontier != nil && rows.count < n - got { rows += try due(after: nil, n - got - rows.count) }
                rows.sort { $0.1 < $1.1 }
                for (claim, _) in rows {
                    claimed.append(claim)
                    tally.move(campaign, from: state, to: .inFlight)
                }
                if state == .pending, let last = rows.last?.1 { result.frontiers[campaign] = max(last, frontier ?? last) }
                got += rows.count
            }
            if got < n, let size = segmentSizes[campaign], size > 0 {
                let segments = try claimSegments(db, campaign: campaign, segmentSize: size, n: n - got, lease: lease, now: now, tally: &tally)
                claimed += segments.claimed
                got += segments.claimed.count
                if let corrupt = segments.corrupt {
                    // Never a guessed token: the campaign fails, the others go on.
                    try Self.failCampaign(db, corrupt)
                    result.corrupt.append(corrupt)
                }
            }
            return got
        }
        // The campaigns served move to the back of their lane (those another instance is
        // writing right now keep their turn: round-robin is best effort across instances); a
        // capped one pays for its sends (its row is this transaction's, locked above).
        let served = fair.served
        let uncapped = served.filter { $0.paidUntil == nil }.map(\.seq)
        if !uncapped.isEmpty {
            let seqs = PGArray.rows(uncapped.map { [$0] }, types: ["bigint"], from: 2)
            try db.execute("""
                UPDATE campaigns SET served_turn = $1
                WHERE seq IN (SELECT seq FROM campaigns WHERE seq IN \(seqs.sql) ORDER BY seq FOR UPDATE SKIP LOCKED)
                """, [.int(lastTurn + 1)] + seqs.values)
        }
        for candidate in served where candidate.paidUntil != nil {
            try db.execute("UPDATE campaigns SET served_turn = $1, rate_paid_until = $2 WHERE seq = $3",
                           [.int(lastTurn + 1), .optional(candidate.paidUntil), .int(candidate.seq)])
        }
        result.claimed = claimed
        return result
    }

    private static func claims(_ rows: PGResult) -> [ClaimedDelivery] {
        (0..<rows.rows).map { i in
            ClaimedDelivery(campaign: rows.int(i, 0), index: Int(rows.int(i, 1)), token: rows.text(i, 2),
                            body: rows.optionalBytes(i, 3), attempt: Int(rows.int(i, 4)), lease: rows.int(i, 5))
        }
    }

    public func message(campaign seq: Int64) throws(StorageError) -> CampaignMessage? {
        try reading { db throws(StorageError) in
            let find = try db.execute("""
                SELECT id, dry_run, push_type, topic, priority, expiration, collapse_id, body, apns_id_prefix, app, environment, channel
                FROM campaigns WHERE seq = $1
                """, [.int(seq)])
            guard find.rows > 0 else { return nil }
            let message = StoredMessage(pushType: find.text(0, 2), topic: find.text(0, 3), priority: Int(find.int(0, 4)),
                                        expiration: find.optionalInt(0, 5), collapseId: find.optionalText(0, 6),
                                        channel: find.optionalText(0, 11))
            return CampaignMessage(id: find.text(0, 0), dryRun: find.bool(0, 1), message: message,
                                   body: find.bytes(0, 7), apnsIDPrefix: find.text(0, 8), app: find.text(0, 9), environment: find.text(0, 10))
        }
    }

    /// Records every update whose lease is still its device's: a segmented campaign's by
    /// segment (`recordSegments`), devices with a row of their own in one statement. Returns
    /// how many counted and the campaigns that had a device reach a final state.
    /// Count changes go to `tally` (applied by the caller, in the same transaction).
    private func recordRows(_ db: PGConnection, _ updates: [DeliveryUpdate], now: Double,
                            tally: inout StateTally) throws(StorageError) -> (counted: Int, settled: [Int64]) {
        guard !updates.isEmpty else { return (0, []) }
        // A retry of a cancelled or expired campaign's device would never be sent: it ends now.
        var stopped: [Int64: DeliveryState?] = [:]
        var rows = updates
        for i in rows.indices where rows[i].state == .retrying {
            let campaign = rows[i].campaign
            if stopped[campaign] == nil { stopped[campaign] = try Self.stoppedState(db, campaign: campaign, now: now) }
            if let state = stopped[campaign] ?? nil {
                rows[i].state = state
                rows[i].nextAttemptAt = nil
            }
        }
        var settled: Set<Int64> = []
        var dead: [(update: DeliveryUpdate, token: String, badToken: Bool)] = []
        var counted = 0
        var campaigns: Set<Int64> = []
        for i in rows.indices where i == 0 || rows[i].campaign != rows[i - 1].campaign { campaigns.insert(rows[i].campaign) }
        let info = try cachedSegmentInfo(db, campaigns: campaigns)
        if info.values.contains(where: { $0.size > 0 }) {
            var segmented: [DeliveryUpdate] = []
            var unsegmented: [DeliveryUpdate] = []
            var last: (campaign: Int64, isSegmented: Bool)?
            for row in rows {
                if last?.campaign != row.campaign { last = (row.campaign, (info[row.campaign]?.size ?? 0) > 0) }
                if last!.isSegmented { segmented.append(row) } else { unsegmented.append(row) }
            }
            let recorded = try recordSegments(db, segmented, info: info, now: now, tally: &tally, settled: &settled, dead: &dead)
            counted += recorded.counted
            rows = unsegmented + recorded.rows
        }
        if !rows.isEmpty {
            // Only the current lease records: a late answer from a lease that expired and was
            // taken over (or a duplicate) cannot overwrite, undo a final state or count twice.
            let changed = try db.execute("""
                UPDATE deliveries d SET state = u.state, status = u.status, reason = u.reason, apns_id = u.apns_id, apns_unique_id = u.unique_id,
                    timestamp_ms = u.ts, next_at = u.next_at, finished_at = u.fin, attempts = d.attempts - u.refund,
                    lease_owner = NULL, lease_until = NULL
                FROM unnest($1::bigint[], $2::int[], $3::smallint[], $4::int[], $5::text[], $6::text[], $7::bigint[],
                            $8::float8[], $9::float8[], $10::int[], $11::bigint[], $12::text[])
                    AS u(campaign, idx, state, status, reason, apns_id, ts, next_at, fin, refund, lease, unique_id)
                WHERE d.campaign = u.campaign AND d.idx = u.idx AND d.state = 1 AND d.lease = u.lease
                RETURNING d.campaign, d.idx, d.state, d.token, d.reason
                """, [
                    .text(PGArray.integers(rows.map(\.campaign))),
                    .text(PGArray.integers(rows.map { Int64($0.index) })),
                    .text(PGArray.integers(rows.map { Int64($0.state.rawValue) })),
                    .text(PGArray.optionalIntegers(rows.map { $0.status.map(Int64.init) })),
                    .text(PGArray.texts(rows.map(\.reason))),
                    .text(PGArray.texts(rows.map(\.apnsID))),
                    .text(PGArray.optionalIntegers(rows.map(\.timestampMilliseconds))),
                    .text(PGArray.doubles(rows.map { $0.nextAttemptAt ?? now })),
                    .text(PGArray.doubles(rows.map { $0.state.isFinal ? now : nil })),
                    .text(PGArray.integers(rows.map { $0.refundAttempt ? 1 : 0 })),
                    .text(PGArray.integers(rows.map(\.lease))),
                    .text(PGArray.texts(rows.map(\.apnsUniqueID))),
                ])
            let byKey = Dictionary(rows.map { (Key(campaign: $0.campaign, index: $0.index), $0) }, uniquingKeysWith: { first, _ in first })
            for i in 0..<changed.rows {
                let campaign = changed.int(i, 0)
                let state = DeliveryState(rawValue: Int(changed.int(i, 2))) ?? .pending
                tally.move(campaign, from: .inFlight, to: state)
                if state.isFinal { settled.insert(campaign) }
                guard let update = byKey[Key(campaign: campaign, index: Int(changed.int(i, 1)))] else { continue }
                if state == .unregistered { dead.append((update, changed.text(i, 3), false)) }
                if state == .failed, changed.optionalText(i, 4) == Self.badDeviceToken { dead.append((update, changed.text(i, 3), true)) }
            }
            counted += changed.rows
        }
        if !dead.isEmpty {
            // Their campaigns' apps and push types came with `info` (every update's campaign is in it).
            var deaths: [Death] = []
            for (update, token, badToken) in dead {
                // A 400 BadDeviceToken kills a Live Activity token (ActivityKit hands out a
                // new one), not a device token (often a token of the other environment).
                if badToken && info[update.campaign]?.pushType != "liveactivity" { continue }
                deaths.append(Death(token: token, timestamp: update.timestampMilliseconds ?? Int64(now * 1000),
                                    reason: update.reason ?? "Unregistered", app: info[update.campaign]?.app ?? ""))
            }
            try recordDead(db, deaths, now: now)
        }
        return (counted, settled.sorted())
    }

    static let badDeviceToken = "BadDeviceToken"

    /// `segmentInfo`, read from the database only for campaigns not seen before (none of
    /// it changes once the campaign row exists, but an unnamed app: a campaign of a
    /// release before apps, named when `serve` adopts it, is not kept).
    private func cachedSegmentInfo(_ db: PGConnection, campaigns: Set<Int64>) throws(StorageError) -> [Int64: SegmentInfo] {
        var info = segmentInfoCache.withLock { cache in campaigns.reduce(into: [Int64: SegmentInfo]()) { $0[$1] = cache[$1] } }
        let missing = campaigns.filter { info[$0] == nil }
        guard !missing.isEmpty else { return info }
        let found = try Self.segmentInfo(db, campaigns: Array(missing))
        segmentInfoCache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache.merge(found.filter { !$0.value.app.isEmpty }) { _, new in new }
        }
        info.merge(found) { _, new in new }
        return info
    }

    private struct Key: Hashable {
        var campaign: Int64
        var index: Int
    }

    /// A token APNs called dead, and what to record about it.
    private struct Death {
        var token: String
        /// Apple's timestamp, or the answer's time when Apple gave none.
        var timestamp: Int64
        var reason: String
        var app: String
    }

    /// 410s (and a Live Activity's BadDeviceToken): each token is dead as of its latest
    /// timestamp, unless an earlier answer already recorded a later death; each death is
    /// queued for the webhook, in order. Two statements for the whole batch.
    private func recordDead(_ db: PGConnection, _ deaths: [Death], now: Double) throws(StorageError) {
        guard !deaths.isEmpty else { return }
        // One row per token (an upsert may not touch a row twice): the first of its latest deaths,
        // as recording them one by one would keep.
        var latest: [String: Int] = [:]
        for (i, death) in deaths.enumerated() {
            if let kept = latest[death.token], deaths[kept].timestamp >= death.timestamp { continue }
            latest[death.token] = i
        }
        let kept = latest.values.sorted().map { deaths[$0] }
        // The tokens and the webhook's queue in one statement (one round trip a turn).
        try db.execute("""
            WITH dead AS (
                INSERT INTO tokens(token, dead_at_ms, dead_reason, recorded_at, app)
                SELECT u.token, u.ts, u.reason, $4, u.app FROM unnest($1::text[], $2::bigint[], $3::text[], $5::text[]) AS u(token, ts, reason, app)
                ON CONFLICT (token) DO UPDATE SET dead_at_ms = excluded.dead_at_ms, dead_reason = excluded.dead_reason,
                    recorded_at = excluded.recorded_at, app = excluded.app
                WHERE tokens.dead_at_ms IS NULL OR excluded.dead_at_ms > tokens.dead_at_ms)
            INSERT INTO feedback_outbox(token, timestamp_ms, reason)
            SELECT u.token, u.ts, u.reason FROM unnest($6::text[], $7::bigint[], $8::text[]) WITH ORDINALITY AS u(token, ts, reason, n)
            ORDER BY u.n
            """, [.text(PGArray.texts(kept.map(\.token))), .text(PGArray.integers(kept.map(\.timestamp))),
                  .text(PGArray.texts(kept.map(\.reason))), .double(now), .text(PGArray.texts(kept.map(\.app))),
                  .text(PGArray.texts(deaths.map(\.token))), .text(PGArray.integers(deaths.map(\.timestamp))),
                  .text(PGArray.texts(deaths.map(\.reason)))])
    }

    /// Whether a retry of this campaign's device would be pointless: cancelled, or past
    /// its expiry. The state such a device ends in instead, else nil.
    static func stoppedState(_ db: PGConnection, campaign seq: Int64, now: Double) throws(StorageError) -> DeliveryState? {
        let find = try db.execute("SELECT control, expires_at FROM campaigns WHERE seq = $1", [.int(seq)])
        guard find.rows > 0 else { return nil }
        if find.int(0, 0) == Int64(CampaignControl.cancelled.rawValue) { return .cancelled }
        if let expires = find.optionalDouble(0, 1), expires <= now { return .expired }
        return nil
    }

    /// Finishes (and queues `campaign.finished` for) each of `campaigns` whose unsent counts
    /// sum to zero. Run after the commit that recorded their devices: whichever of two
    /// instances commits last sees both, and the row lock lets only one of them finish it.
    /// A failure here is caught up by the next `closeStopped`, which looks at every campaign.
    func finishSettled(_ campaigns: [Int64], now: Double) {
        guard !campaigns.isEmpty else { return }
        _ = try? writing { db throws(StorageError) in try Self.finishSettled(db, campaigns: campaigns, now: now) }
    }

    /// Returns how many campaigns it finished.
    @discardableResult
    static func finishSettled(_ db: PGConnection, campaigns: [Int64]?, now: Double) throws(StorageError) -> Int {
        let which = campaigns == nil ? "" : "c.seq = ANY($2::bigint[]) AND"
        return try db.execute("""
            WITH done AS (
                UPDATE campaigns c SET finished_at = $1
                WHERE \(which) c.finished_at IS NULL AND NOT c.filling AND NOT EXISTS (
                    SELECT 1 FROM campaign_counts k WHERE k.campaign = c.seq AND k.state IN (0, 1, 2)
                    GROUP BY k.state HAVING sum(k.n) <> 0)
                RETURNING c.seq)
            INSERT INTO campaign_events(campaign) SELECT seq FROM done
            """, campaigns.map { [.double(now), .text(PGArray.integers($0))] } ?? [.double(now)]).changed
    }

    /// On a shared database no instance can tell that another one died before its leases
    /// expire, so nothing is given back at start: expired leases are taken over by claims.
    public func requeueInFlight() throws(StorageError) -> Int { 0 }

    public func nextDueTime(now: Double) throws(StorageError) -> Double? {
        try reading { db throws(StorageError) in
            // The first due row of each sendable campaign (for a capped one, not before its rate
            // allows the next send), a scheduled campaign's start, an expiry, and the next
            // lease to expire (another instance's, to take over); a segmented campaign with a
            // segment unleased, expired, or held by this instance with devices left: now.
            let first = try db.execute("""
                SELECT min(t) FROM (
                    SELECT CASE WHEN f.t IS NOT NULL AND c.rate_per_second > 0 AND c.rate_paid_until IS NOT NULL
                                THEN greatest(f.t, c.rate_paid_until + 1.0 / c.rate_per_second) ELSE f.t END AS t
                    FROM campaigns c,
                         LATERAL (SELECT min(next_at) AS t FROM deliveries d WHERE d.campaign = c.seq AND d.state IN (0, 2)) f
                    WHERE c.finished_at IS NULL AND c.control = 0 AND (c.send_at IS NULL OR c.send_at <= $1) AND (c.expires_at IS NULL OR c.expires_at > $1)
                    UNION ALL SELECT CASE WHEN c.rate_per_second > 0 AND c.rate_paid_until IS NOT NULL
                                          THEN greatest($1, c.rate_paid_until + 1.0 / c.rate_per_second) ELSE $1 END
                    FROM campaigns c
                    WHERE c.finished_at IS NULL AND c.control = 0 AND (c.send_at IS NULL OR c.send_at <= $1) AND (c.expires_at IS NULL OR c.expires_at > $1)
                      AND c.segment_size > 0 AND NOT c.filling AND c.failure IS NULL
                      AND EXISTS (SELECT 1 FROM segment_state s WHERE s.campaign = c.seq AND s.open
                                  AND (s.lease_owner IS NULL OR s.lease_until <= $1 OR (s.lease_owner = $2 AND s.handed < s.count)))
                    UNION ALL SELECT min(lease_until) FROM segment_state WHERE open AND lease_until > $1
                    UNION ALL SELECT send_at FROM campaigns WHERE finished_at IS NULL AND control = 0 AND send_at > $1
                    UNION ALL SELECT expires_at FROM campaigns WHERE finished_at IS NULL AND expires_at > $1
                    UNION ALL SELECT min(lease_until) FROM deliveries WHERE state = 1 AND lease_until > $1) AS x
                """, [.double(now), .text(options.instance)])
            return first.optionalDouble(0, 0)
        }
    }
}

/// A position in a campaign's pending devices, in claim order.
struct PendingFrontier: Comparable, Sendable {
    var nextAt: Double
    var index: Int64

    static func < (a: PendingFrontier, b: PendingFrontier) -> Bool { (a.nextAt, a.index) < (b.nextAt, b.index) }
}
