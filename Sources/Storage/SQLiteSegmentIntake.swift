/// Intake into segments: devices are streamed into segments of `segmentSize`; one
/// segment's devices are in memory at a time. Used by `insert` and by parts
/// (`appendDevices`), which continue the campaign's last segment.
struct SegmentWriter {
    let campaign: Int64
    let size: Int
    /// The index the next device gets.
    private(set) var nextIndex: Int
    private var devices: [SegmentDevice] = []
    private var codes: [UInt8] = []

    /// `firstIndex` mid-segment: `pending` holds that segment's devices and codes so far
    /// (a campaign filled in parts, not yet sendable: its last segment is written again).
    init(campaign: Int64, size: Int, firstIndex: Int, pending: [SegmentDevice] = [], codes: [UInt8] = []) {
        self.campaign = campaign
        self.size = size
        nextIndex = firstIndex
        devices = pending
        self.codes = codes
        devices.reserveCapacity(size)
    }

    /// Adds the device at `nextIndex`.
    mutating func add(_ device: SegmentDevice, code: SegmentCode, _ db: SQLiteDatabase, now: Double) throws(StorageError) {
        devices.append(device)
        codes.append(code.rawValue)
        nextIndex += 1
        if devices.count == size { try flush(db, now: now) }
    }

    /// The token of an earlier device of this intake: from the segment being filled, or
    /// read back from one written in this transaction (not through the decoded cache: the
    /// transaction may still roll back, and its campaign number be given again).
    func token(at index: Int, _ db: SQLiteDatabase) throws(StorageError) -> String {
        let first = nextIndex - devices.count
        if index >= first { return devices[index - first].token }
        let seg = Int64(index / size)
        guard let row = try SQLiteCampaignStorage.storedSegmentRow(db, campaign: campaign, seg: seg) else {
            throw StorageError(.segmentCorrupt, "segment \(seg) of campaign \(campaign) is missing during its intake")
        }
        do throws(SegmentDecodeError) {
            return try row.devices(campaign: campaign, seg: seg)[index % size].token
        } catch {
            throw StorageError(.segmentCorrupt, error.description)
        }
    }

    /// Writes the segment being filled (its immutable row and its state row).
    mutating func flush(_ db: SQLiteDatabase, now: Double) throws(StorageError) {
        guard !devices.isEmpty else { return }
        let seg = Int64((nextIndex - 1) / size)
        let first = Int(seg) * size
        let packed = SegmentCodec.pack(devices, campaign: campaign, segment: seg, firstIndex: first)
        try db.statement("""
            INSERT INTO segments(campaign, seg, first_idx, count, format, tokens, bodies, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(campaign, seg) DO UPDATE SET count = excluded.count, format = excluded.format, tokens = excluded.tokens,
                bodies = excluded.bodies, checksum = excluded.checksum
            """).bind(.int(campaign), .int(seg), .integer(first), .integer(packed.count), .integer(packed.format.rawValue),
                      .blob(packed.tokens), packed.bodies.map { .blob($0) } ?? .null, .int(packed.checksum)).run()
        let open = codes.contains(SegmentCode.open.rawValue)
        try db.statement("""
            INSERT INTO segment_state(campaign, seg, count, codes, open, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(campaign, seg) DO UPDATE SET count = excluded.count, codes = excluded.codes, open = excluded.open,
                updated_at = excluded.updated_at
            """).bind(.int(campaign), .int(seg), .integer(codes.count), .blob(codes), .int(open ? 1 : 0), .double(now)).run()
        devices.removeAll(keepingCapacity: true)
        codes.removeAll(keepingCapacity: true)
    }
}

/// What one intake wrote.
struct IntakeTotals {
    var devices = 0
    var skipped = 0
    /// Devices still to send (pending).
    var remaining = 0
}

extension SQLiteCampaignStorage {
    /// Streams `deliveries` into `writer`'s segments. A dead token (for `app`, not registered
    /// again since) is `skipped` and a `failureReason` device `failed`, each with its
    /// exception row (code `row`), exactly as rows were before segments. Counts go to `tally`.
    static func intake(_ db: SQLiteDatabase, into writer: inout SegmentWriter, app: String, deliveries: some Sequence<NewDelivery>,
                       rejectDuplicateTokens: Bool, now: Double, tally: inout StateTally) throws(StorageError) -> IntakeTotals {
        let seq = writer.campaign
        let checkDead = try db.statement("SELECT EXISTS(SELECT 1 FROM tokens WHERE dead_at_ms IS NOT NULL)")
        let anyDead = try checkDead.step() && checkDead.int(0) == 1
        checkDead.reset()
        // Dead for this app, and not registered again since: the same rule as `deadTokens`.
        let lookup = """
            SELECT dead_at_ms, dead_reason FROM tokens WHERE token = ? AND dead_at_ms IS NOT NULL AND app = ?
              AND (registered_at_ms IS NULL OR registered_at_ms <= dead_at_ms)
            """
        let insertSQL = """
            INSERT INTO deliveries(campaign, idx, token, body, state, status, reason, timestamp_ms, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        var duplicates = rejectDuplicateTokens ? DuplicateTokens() : nil
        var totals = IntakeTotals()
        for delivery in deliveries {
            let index = writer.nextIndex
            try duplicates?.check(delivery.token, at: index) { (earlier) throws(StorageError) -> String in
                try writer.token(at: earlier, db)
            }
            var state = DeliveryState.pending
            var reason = delivery.failureReason
            var timestamp: Int64?
            if reason != nil {
                state = .failed
            } else if anyDead {
                let find = try db.statement(lookup).bind(.text(delivery.token), .text(app))
                if try find.step() {
                    state = .skipped
                    reason = find.text(1)
                    timestamp = find.int(0)
                    totals.skipped += 1
                }
                find.reset()
            }
            if state == .pending {
                totals.remaining += 1
            } else {
                try db.statement(insertSQL)
                    .bind(.int(seq), .integer(index), .text(delivery.token), delivery.body.map { .blob($0) } ?? .null,
                          .integer(state.rawValue), .null, .optional(reason), .optional(timestamp), .double(now)).run()
            }
            tally.add(seq, state, 1)
            try writer.add(SegmentDevice(token: delivery.token, body: delivery.body), code: state == .pending ? .open : .row, db, now: now)
            totals.devices += 1
        }
        try writer.flush(db, now: now)
        return totals
    }
}

// MARK: Campaigns filled in parts

extension SQLiteCampaignStorage {
    public func appendDevices(campaign id: String, part: Int, requestSHA256: String,
                              deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> AppendOutcome {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> AppendOutcome in
                let find = try db.statement("""
                    SELECT seq, filling AND finished_at IS NULL AND control <> 2, devices, segment_size, app FROM campaigns WHERE id = ?
                    """).bind(.text(id))
                guard try find.step() else {
                    find.reset()
                    throw StorageError(.campaignNotFound, "no campaign has id \(id)")
                }
                let seq = find.int(0)
                let filling = find.int(1) != 0
                let first = Int(find.int(2))
                let size = Int(find.int(3))
                let app = find.text(4)
                find.reset()
                let earlier = try db.statement("SELECT sha256, first_idx, devices, skipped FROM campaign_parts WHERE campaign = ? AND part = ?")
                    .bind(.int(seq), .integer(part))
                if try earlier.step() {
                    let receipt = PartReceipt(part: part, firstIndex: Int(earlier.int(1)), devices: Int(earlier.int(2)), skipped: Int(earlier.int(3)))
                    let same = earlier.text(0) == requestSHA256
                    earlier.reset()
                    guard same else {
                        throw StorageError(.partConflict, "part \(part) of campaign \(id) was appended before with other devices")
                    }
                    return .alreadyAppended(receipt)
                }
                earlier.reset()
                guard filling, size > 0 else {
                    throw StorageError(.notFilling, "campaign \(id) is not taking devices in parts (it was started, cancelled or created with its devices)")
                }
                // The last segment, if partial, is continued (written again: nothing is sent
                // from a filling campaign), so device idx stays in segment idx / size.
                var writer = SegmentWriter(campaign: seq, size: size, firstIndex: first)
                if first % size != 0 {
                    let seg = Int64(first / size)
                    guard let state = try Self.loadSegment(db, campaign: seq, seg: seg) else {
                        throw StorageError(.segmentCorrupt, "segment \(seg) of campaign \(seq) is missing")
                    }
                    switch try segmentDevices(db, campaign: seq, seg: seg, count: state.count) {
                    case .success(let devices):
                        writer = SegmentWriter(campaign: seq, size: size, firstIndex: first, pending: devices, codes: state.progress.codes)
                    case .failure(let error):
                        throw StorageError(.segmentCorrupt, error.description)
                    }
                }
                var tally = StateTally()
                let totals = try Self.intake(db, into: &writer, app: app, deliveries: deliveries, rejectDuplicateTokens: false,
                                             now: now, tally: &tally)
                try db.statement("UPDATE campaigns SET devices = devices + ?, remaining = remaining + ? WHERE seq = ?")
                    .bind(.integer(totals.devices), .integer(totals.remaining), .int(seq)).run()
                try db.statement("""
                    INSERT INTO campaign_parts(campaign, part, sha256, first_idx, devices, skipped) VALUES (?, ?, ?, ?, ?, ?)
                    """).bind(.int(seq), .integer(part), .text(requestSHA256), .integer(first), .integer(totals.devices),
                              .integer(totals.skipped)).run()
                try tally.apply(db)
                return .appended(PartReceipt(part: part, firstIndex: first, devices: totals.devices, skipped: totals.skipped))
            }
        }
    }

    public func finishFilling(campaign id: String, expectedDevices: Int?, transactionalMaxDevices: Int,
                              now: Double) throws(StorageError) -> FillOutcome {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> FillOutcome in
                let find = try db.statement("""
                    SELECT seq, filling, devices, remaining, lane, finished_at IS NOT NULL OR control = 2 FROM campaigns WHERE id = ?
                    """).bind(.text(id))
                guard try find.step() else {
                    find.reset()
                    throw StorageError(.campaignNotFound, "no campaign has id \(id)")
                }
                let seq = find.int(0)
                let filling = find.int(1) != 0
                let devices = Int(find.int(2))
                let remaining = Int(find.int(3))
                let storedLane = Int(find.int(4))
                let stopped = find.int(5) != 0
                find.reset()
                guard filling else {
                    guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                    return .unchanged(summary)
                }
                guard !stopped else { throw StorageError(.notFilling, "campaign \(id) was cancelled or has finished: it cannot be started") }
                guard devices > 0 else { throw StorageError(.notFilling, "campaign \(id) has no device to send") }
                // A part stored after the guard read the count: the guard must see the new one.
                if let expectedDevices, expectedDevices != devices {
                    guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                    return .devicesChanged(summary)
                }
                let lane = Lane(rawValue: storedLane) ?? (devices <= transactionalMaxDevices ? .transactional : .bulk)
                try db.statement("UPDATE campaigns SET filling = 0, lane = ?, finished_at = ? WHERE seq = ?")
                    .bind(.integer(lane.rawValue), remaining <= 0 ? .double(now) : .null, .int(seq)).run()
                // Nothing to send (every token dead): finished at once.
                if remaining <= 0 { try Self.recordFinished(db, campaign: seq) }
                guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                return .started(summary)
            }
        }
    }
}
