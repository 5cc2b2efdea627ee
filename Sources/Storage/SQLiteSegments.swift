/// A segmented campaign's devices in SQLite (see `SegmentLayout`): the immutable
/// `segments` rows written at intake, the small mutable `segment_state` rows a claim and a
/// record rewrite, and the exception rows in `deliveries` for devices whose result is not a
/// plain success. Device `idx` is in segment `idx / segment_size` at `idx % segment_size`.
extension SQLiteCampaignStorage {
    // MARK: Segment state

    /// One `segment_state` row as read in a transaction, changed in memory, written once.
    struct SegmentState {
        var campaign: Int64
        var seg: Int64
        var leaseOwner: String?
        var leaseUntil: Double?
        /// The fencing number: only updates claimed under it record.
        var lease: Int64
        var progress: SegmentProgress
        var isOpen: Bool
        /// `isOpen` and `leaseOwner` as read: when neither changed, the write leaves the
        /// open and leased indexes alone (setting an indexed column rewrites its index
        /// entry even to the same value: two more pages in the WAL every turn).
        var storedOpen: Bool? = nil
        var storedOwner: String? = nil
        var count: Int { progress.codes.count }

        func isLive(now: Double) -> Bool { leaseOwner != nil && (leaseUntil ?? 0) > now }
    }

    static func loadSegment(_ db: SQLiteDatabase, campaign: Int64, seg: Int64) throws(StorageError) -> SegmentState? {
        let find = try db.statement("""
            SELECT lease_owner, lease_until, lease, handed, reached, codes, open FROM segment_state WHERE campaign = ? AND seg = ?
            """).bind(.int(campaign), .int(seg))
        defer { find.reset() }
        guard try find.step() else { return nil }
        return SegmentState(campaign: campaign, seg: seg, leaseOwner: find.optionalText(0), leaseUntil: find.optionalDouble(1),
                            lease: find.int(2),
                            progress: SegmentProgress(codes: find.blob(5), handed: Int(find.int(3)), reached: Int(find.int(4))),
                            isOpen: find.int(6) != 0, storedOpen: find.int(6) != 0, storedOwner: find.optionalText(0))
    }

    /// `now` nil: `updated_at` stays (a start-up give-back knows no time).
    static func saveSegment(_ db: SQLiteDatabase, _ state: SegmentState, now: Double?) throws(StorageError) {
        if let storedOpen = state.storedOpen, storedOpen == state.isOpen, state.storedOwner == state.leaseOwner {
            try db.statement("""
                UPDATE segment_state SET lease_until = ?, lease = ?, handed = ?, reached = ?, codes = ?, updated_at = coalesce(?, updated_at)
                WHERE campaign = ? AND seg = ?
                """).bind(state.leaseUntil.map { .double($0) } ?? .null, .int(state.lease),
                          .integer(state.progress.handed), .integer(state.progress.reached), .blob(state.progress.codes),
                          now.map { .double($0) } ?? .null, .int(state.campaign), .int(state.seg)).run()
            return
        }
        try db.statement("""
            UPDATE segment_state SET lease_owner = ?, lease_until = ?, lease = ?, handed = ?, reached = ?, codes = ?, open = ?,
                updated_at = coalesce(?, updated_at)
            WHERE campaign = ? AND seg = ?
            """).bind(.optional(state.leaseOwner), state.leaseUntil.map { .double($0) } ?? .null, .int(state.lease),
                      .integer(state.progress.handed), .integer(state.progress.reached), .blob(state.progress.codes),
                      .int(state.isOpen ? 1 : 0), now.map { .double($0) } ?? .null, .int(state.campaign), .int(state.seg)).run()
    }

    // MARK: Decoding

    /// The devices of one stored segment of `count` devices, decoded once (see `DecodedSegments`).
    func segmentDevices(_ db: SQLiteDatabase, campaign: Int64, seg: Int64, count: Int) throws(StorageError) -> Result<[SegmentDevice], SegmentDecodeError> {
        try decoded.devices(campaign: campaign, seg: seg, count: count) { () throws(StorageError) -> StoredSegmentRow? in
            try Self.storedSegmentRow(db, campaign: campaign, seg: seg)
        }
    }

    /// One segment's stored row, read as it is (nil: none), not through the decoded cache.
    static func storedSegmentRow(_ db: SQLiteDatabase, campaign: Int64, seg: Int64) throws(StorageError) -> StoredSegmentRow? {
        let find = try db.statement("SELECT first_idx, count, format, tokens, bodies, checksum FROM segments WHERE campaign = ? AND seg = ?")
            .bind(.int(campaign), .int(seg))
        defer { find.reset() }
        guard try find.step() else { return nil }
        return StoredSegmentRow(firstIndex: Int(find.int(0)), count: Int(find.int(1)), format: Int(find.int(2)),
                                tokens: find.blob(3), bodies: find.optionalBlob(4), checksum: find.int(5))
    }

    // MARK: Claim

    /// Hands out up to `limit` devices of a segmented campaign's segments, in the shared
    /// design's order: segments this owner holds, then expired leases (taken over: the
    /// fencing number moves on and every open position is handed again), then unleased
    /// segments in order. Statements: a few per segment touched. Returns how many, or the
    /// segment that does not decode (nothing of it is handed out).
    func takeFromSegments(_ db: SQLiteDatabase, campaign: Int64, limit: Int, lease: LeaseTerms, now: Double,
                          into claimed: inout [ClaimedDelivery], tally: inout StateTally) throws(StorageError) -> Result<Int, SegmentDecodeError> {
        var got = 0
        // Leased open segments are few (those in flight): read them all, mine first.
        let leased = try db.statement("""
            SELECT seg, lease_owner, lease_until, handed, count FROM segment_state INDEXED BY segment_state_leased
            WHERE campaign = ? AND open = 1 AND lease_owner IS NOT NULL ORDER BY seg
            """).bind(.int(campaign))
        var mine: [Int64] = []
        var expired: [Int64] = []
        while try leased.step() {
            let until = leased.double(2)
            if until <= now {
                expired.append(leased.int(0))
            } else if leased.text(1) == lease.owner && leased.int(3) < leased.int(4) {
                mine.append(leased.int(0))
            }
        }
        leased.reset()
        for seg in mine + expired where got < limit {
            switch try handOut(db, campaign: campaign, seg: seg, limit: limit - got, lease: lease, now: now, into: &claimed, tally: &tally) {
            case .success(let n): got += n
            case .failure(let error): return .failure(error)
            }
        }
        var after: Int64 = -1
        while got < limit {
            let unleased = try db.statement("""
                SELECT seg FROM segment_state INDEXED BY segment_state_open
                WHERE campaign = ? AND open = 1 AND seg > ? AND lease_owner IS NULL ORDER BY seg LIMIT ?
                """).bind(.int(campaign), .int(after), .integer(max(2, (limit - got) / SegmentLayout.devicesPerSegment + 2)))
            var segs: [Int64] = []
            while try unleased.step() { segs.append(unleased.int(0)) }
            unleased.reset()
            guard !segs.isEmpty else { break }
            for seg in segs where got < limit {
                switch try handOut(db, campaign: campaign, seg: seg, limit: limit - got, lease: lease, now: now, into: &claimed, tally: &tally) {
                case .success(let n): got += n
                case .failure(let error): return .failure(error)
                }
            }
            after = segs[segs.count - 1]
        }
        return .success(got)
    }

    /// Leases one segment to `lease.owner` (a new holder, or an expired lease taken over,
    /// moves the fencing number on and starts handing from its first open position) and
    /// hands out its next open positions.
    private func handOut(_ db: SQLiteDatabase, campaign: Int64, seg: Int64, limit: Int, lease: LeaseTerms, now: Double,
                         into claimed: inout [ClaimedDelivery], tally: inout StateTally) throws(StorageError) -> Result<Int, SegmentDecodeError> {
        guard var state = try Self.loadSegment(db, campaign: campaign, seg: seg), state.isOpen else { return .success(0) }
        if !(state.leaseOwner == lease.owner && state.isLive(now: now)) {
            guard !state.isLive(now: now) else { return .success(0) }  // another holder's
            state.lease += 1
            state.progress.handed = 0
        }
        let size = try Self.segmentSize(db, campaign: campaign)
        let firstIndex = Int(seg) * size
        var devices: [SegmentDevice]?
        var got = 0
        var p = state.progress.handed
        while p < state.count && got < limit {
            if state.progress.codes[p] == SegmentCode.open.rawValue {
                if devices == nil {
                    switch try segmentDevices(db, campaign: campaign, seg: seg, count: state.count) {
                    case .success(let all): devices = all
                    case .failure(let error): return .failure(error)
                    }
                    guard devices!.count == state.count else {
                        return .failure(SegmentDecodeError(campaign: campaign, segment: seg,
                                                           problem: "\(devices!.count) devices for \(state.count) codes"))
                    }
                }
                let device = devices![p]
                let again = p < state.progress.reached
                claimed.append(ClaimedDelivery(campaign: campaign, index: firstIndex + p, token: device.token, body: device.body,
                                               attempt: again ? 2 : 1, lease: state.lease))
                if !again { tally.move(campaign, from: .pending, to: .inFlight) }
                got += 1
            }
            p += 1
        }
        state.progress.handed = p
        state.progress.reached = max(state.progress.reached, p)
        state.leaseOwner = lease.owner
        state.leaseUntil = now + lease.seconds
        try Self.saveSegment(db, state, now: now)
        return .success(got)
    }

    /// 0: a campaign written before segments (a row per device).
    static func segmentSize(_ db: SQLiteDatabase, campaign: Int64) throws(StorageError) -> Int {
        let find = try db.statement("SELECT segment_size FROM campaigns WHERE seq = ?").bind(.int(campaign))
        defer { find.reset() }
        return try find.step() ? Int(find.int(0)) : 0
    }

    // MARK: Bad input

    /// A segment of the campaign does not decode: the campaign fails with that error (no
    /// device of it is sent any more, none from a guessed token), its devices not yet
    /// final end `failed` (`segmentCorrupt`), and it finishes. Other campaigns go on.
    func failCorrupt(_ db: SQLiteDatabase, campaign: Int64, _ error: SegmentDecodeError, now: Double) throws(StorageError) {
        try db.statement("UPDATE campaigns SET failure = ? WHERE seq = ? AND failure IS NULL").bind(.text(error.description), .int(campaign)).run()
        try db.statement("""
            UPDATE deliveries SET state = 4, reason = ?, status = NULL, finished_at = ?, lease = lease + 1, lease_owner = NULL, lease_until = NULL
            WHERE campaign = ? AND state IN (0, 1, 2)
            """).bind(.text(Self.segmentCorruptReason), .double(now), .int(campaign)).run()
        // Open codes stay 0: with `failure` set they read as failed (`segmentCorrupt`).
        try db.statement("""
            UPDATE segment_state SET open = 0, lease = lease + 1, lease_owner = NULL, lease_until = NULL, updated_at = ?
            WHERE campaign = ? AND open = 1
            """).bind(.double(now), .int(campaign)).run()
        try Self.recount(db, campaign: campaign)
        try db.statement("UPDATE campaigns SET remaining = 0, finished_at = ? WHERE seq = ? AND finished_at IS NULL")
            .bind(.double(now), .int(campaign)).run()
        if db.changes == 1 { try Self.recordFinished(db, campaign: campaign) }
    }

    /// The reason of a device its campaign's corrupt segment failed.
    static let segmentCorruptReason = "segmentCorrupt"

    /// Rebuilds the campaign's counts from its rows and its segments' codes (rare: a
    /// campaign that failed).
    static func recount(_ db: SQLiteDatabase, campaign: Int64) throws(StorageError) {
        var counts: [DeliveryState: Int] = [:]
        let rows = try db.statement("SELECT state, count(*) FROM deliveries WHERE campaign = ? GROUP BY state").bind(.int(campaign))
        while try rows.step() {
            if let state = DeliveryState(rawValue: Int(rows.int(0))) { counts[state, default: 0] += Int(rows.int(1)) }
        }
        rows.reset()
        let failed = try db.statement("SELECT failure IS NOT NULL FROM campaigns WHERE seq = ?").bind(.int(campaign))
        let isFailed = try failed.step() && failed.int(0) != 0
        failed.reset()
        let segments = try db.statement("SELECT reached, codes FROM segment_state WHERE campaign = ?").bind(.int(campaign))
        while try segments.step() {
            let reached = Int(segments.int(0))
            for (p, code) in segments.blob(1).enumerated() {
                guard let code = SegmentCode(rawValue: code) else { continue }
                if let state = code.state {
                    counts[state, default: 0] += 1
                } else if code == .open {
                    counts[isFailed ? .failed : p < reached ? .inFlight : .pending, default: 0] += 1
                }
            }
        }
        segments.reset()
        try db.statement("DELETE FROM campaign_counts WHERE campaign = ?").bind(.int(campaign)).run()
        for (state, n) in counts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where n > 0 {
            try db.statement("INSERT INTO campaign_counts(campaign, state, n) VALUES (?, ?, ?)")
                .bind(.int(campaign), .integer(state.rawValue), .integer(n)).run()
        }
    }

    // MARK: Record

    /// What a campaign's record needs to know once per transaction.
    struct RecordedCampaign {
        var segmentSize: Int
        var apnsIDPrefix: String
    }

    static func recordedCampaign(_ db: SQLiteDatabase, campaign: Int64) throws(StorageError) -> RecordedCampaign? {
        let find = try db.statement("SELECT segment_size, apns_id_prefix FROM campaigns WHERE seq = ?").bind(.int(campaign))
        defer { find.reset() }
        guard try find.step() else { return nil }
        return RecordedCampaign(segmentSize: Int(find.int(0)), apnsIDPrefix: find.text(1))
    }

    /// Writes the exception row of a segment's device: its result is not a plain success,
    /// or it was given back. From then on the row is the device's truth (code `row`); its
    /// lease starts at the segment's fencing number, so a stale update never matches it.
    func insertExceptionRow(_ db: SQLiteDatabase, _ update: DeliveryUpdate, seg: Int64, count: Int, fence: Int64, position: Int,
                            now: Double) throws(StorageError) {
        let device: SegmentDevice
        switch try segmentDevices(db, campaign: update.campaign, seg: seg, count: count) {
        case .success(let devices) where position < devices.count: device = devices[position]
        // Decoded at the claim; if the row no longer decodes, the result is still kept.
        default: device = SegmentDevice(token: "")
        }
        try db.statement("""
            INSERT INTO deliveries(campaign, idx, token, body, state, attempts, next_at, status, reason, apns_id, apns_unique_id,
                                   timestamp_ms, finished_at, lease)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).bind(.int(update.campaign), .integer(update.index), .text(device.token), device.body.map { .blob($0) } ?? .null,
                      .integer(update.state.rawValue), .integer(update.refundAttempt ? 0 : 1), .double(update.nextAttemptAt ?? now),
                      .optional(update.status.map(Int64.init)), .optional(update.reason), .optional(update.apnsID),
                      .optional(update.apnsUniqueID), .optional(update.timestampMilliseconds),
                      update.state.isFinal ? .double(now) : .null, .int(fence)).run()
    }

    // MARK: Results

    /// A page of a segmented campaign's results: its segments' codes merged with its
    /// exception rows, in index order. `states` nil: `offset` is the first index; else how
    /// many matching devices to skip.
    func segmentedResults(_ db: SQLiteDatabase, campaign: Int64, size: Int, prefix: String, failed: Bool,
                          states: Set<DeliveryState>?, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow] {
        var rows: [DeliveryResultRow] = []
        guard limit > 0 else { return rows }
        var skip = states == nil ? 0 : offset
        var seg = Int64(states == nil ? max(0, offset) / size : 0)
        while rows.count < limit {
            let read = try db.statement("SELECT seg, reached, codes FROM segment_state WHERE campaign = ? AND seg >= ? ORDER BY seg LIMIT 16")
                .bind(.int(campaign), .int(seg))
            var batch: [(Int64, Int, [UInt8])] = []
            while try read.step() { batch.append((read.int(0), Int(read.int(1)), read.blob(2))) }
            read.reset()
            guard !batch.isEmpty else { break }
            for (s, reached, codes) in batch where rows.count < limit {
                let first = Int(s) * size
                let start = states == nil ? max(0, offset - first) : 0
                guard start < codes.count else { continue }
                var exceptions: [Int: DeliveryResultRow] = [:]
                if codes.contains(SegmentCode.row.rawValue) {
                    let page = try db.statement("""
                        SELECT \(Self.resultColumns) FROM deliveries WHERE campaign = ? AND idx >= ? AND idx < ?
                        """).bind(.int(campaign), .integer(first), .integer(first + codes.count))
                    while try page.step() {
                        let row = Self.resultRow(page)
                        exceptions[row.index] = row
                    }
                    page.reset()
                }
                func state(_ p: Int) -> DeliveryState? {
                    let code = SegmentCode(rawValue: codes[p]) ?? .row
                    if let state = code.state { return state }
                    if code == .row { return exceptions[first + p]?.state }
                    return failed ? .failed : p < reached ? .inFlight : .pending
                }
                // Whole segments before the page are counted from their codes, never decoded.
                if let states, skip > 0 {
                    let matching = (start..<codes.count).reduce(0) { n, p in state(p).map { states.contains($0) } == true ? n + 1 : n }
                    if matching <= skip {
                        skip -= matching
                        continue
                    }
                }
                var devices: [SegmentDevice]?
                for p in start..<codes.count where rows.count < limit {
                    guard let st = state(p), states?.contains(st) ?? true else { continue }
                    if skip > 0 {
                        skip -= 1
                        continue
                    }
                    if let row = exceptions[first + p] {
                        rows.append(row)
                        continue
                    }
                    if devices == nil {
                        if case .success(let all) = try segmentDevices(db, campaign: campaign, seg: s, count: codes.count), all.count == codes.count {
                            devices = all
                        } else {
                            // The campaign failed on it: its tokens cannot be told.
                            devices = Array(repeating: SegmentDevice(token: ""), count: codes.count)
                        }
                    }
                    let token = devices![p].token
                    let index = first + p
                    switch st {
                    case .delivered:
                        rows.append(DeliveryResultRow(index: index, token: token, state: st, attempts: 1, status: 200, reason: nil,
                                                      apnsID: CampaignMessage.apnsID(prefix: prefix, index: index), timestampMilliseconds: nil, nextAttemptAt: nil))
                    case .dryRun:
                        rows.append(DeliveryResultRow(index: index, token: token, state: st, attempts: 1, status: nil, reason: nil,
                                                      apnsID: CampaignMessage.apnsID(prefix: prefix, index: index), timestampMilliseconds: nil, nextAttemptAt: nil))
                    case .failed:
                        rows.append(DeliveryResultRow(index: index, token: token, state: st, attempts: p < reached ? 1 : 0, status: nil,
                                                      reason: Self.segmentCorruptReason, apnsID: nil, timestampMilliseconds: nil, nextAttemptAt: nil))
                    case .inFlight:
                        rows.append(DeliveryResultRow(index: index, token: token, state: st, attempts: 1, status: nil, reason: nil,
                                                      apnsID: nil, timestampMilliseconds: nil, nextAttemptAt: nil))
                    default:
                        // pending, and cancelled or expired before being sent: never attempted.
                        rows.append(DeliveryResultRow(index: index, token: token, state: st, attempts: p < reached && st != .pending ? 1 : 0,
                                                      status: nil, reason: nil, apnsID: nil, timestampMilliseconds: nil, nextAttemptAt: nil))
                    }
                }
            }
            seg = batch[batch.count - 1].0 + 1
        }
        return rows
    }

    static let resultColumns = "idx, token, state, attempts, status, reason, apns_id, timestamp_ms, next_at, apns_unique_id"

    static func resultRow(_ page: SQLiteStatement) -> DeliveryResultRow {
        let state = DeliveryState(rawValue: Int(page.int(2))) ?? .pending
        return DeliveryResultRow(index: Int(page.int(0)), token: page.text(1), state: state, attempts: Int(page.int(3)),
                                 status: page.optionalInt(4).map(Int.init), reason: page.optionalText(5),
                                 apnsID: page.optionalText(6), apnsUniqueID: page.optionalText(9), timestampMilliseconds: page.optionalInt(7),
                                 nextAttemptAt: state == .retrying ? page.double(8) : nil)
    }
}
