import Storage

/// A campaign filled in parts (`NewCampaign.filling`): each part's devices get the next
/// indices, continuing the last segment if it is partial, in one transaction per part;
/// `campaign_parts` remembers each part's hash so a part sent again is answered as before.
extension PostgresCampaignStorage {
    public func appendDevices(campaign id: String, part: Int, requestSHA256: String,
                              deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> AppendOutcome {
        let outcome = try transaction { db throws(StorageError) -> AppendOutcome in
            // The row lock orders two parts of one campaign arriving through two instances.
            let find = try db.execute("""
                SELECT seq, filling AND finished_at IS NULL AND control <> 2, app, segment_size FROM campaigns WHERE id = $1 FOR UPDATE
                """, [.text(id)])
            guard find.rows > 0 else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
            let seq = find.int(0, 0)
            let earlier = try db.execute("SELECT sha256, first_idx, devices, skipped FROM campaign_parts WHERE campaign = $1 AND part = $2",
                                         [.int(seq), .integer(part)])
            if earlier.rows > 0 {
                let receipt = PartReceipt(part: part, firstIndex: Int(earlier.int(0, 1)), devices: Int(earlier.int(0, 2)), skipped: Int(earlier.int(0, 3)))
                guard earlier.text(0, 0) == requestSHA256 else {
                    throw StorageError(.partConflict, "part \(part) of campaign \(id) was appended before with other devices")
                }
                return .alreadyAppended(receipt)
            }
            let size = Int(find.int(0, 3))
            guard find.bool(0, 1), size > 0 else {
                throw StorageError(.notFilling, "campaign \(id) is not taking devices in parts (it was started, cancelled or created with its devices)")
            }
            try db.execute("SET LOCAL idle_in_transaction_session_timeout = \(Self.intakeIdleMilliseconds)")
            // The next part continues after the last stored device, in the last segment if it
            // is partial (written again: nothing is sent from a campaign being filled).
            let first = Int(try db.execute("SELECT coalesce(max(first_idx + count), 0) FROM segments WHERE campaign = $1", [.int(seq)]).int(0, 0))
            var carried: (devices: [SegmentDevice], codes: [UInt8]) = ([], [])
            if first % size != 0 {
                carried = try Self.storedSegment(db, campaign: seq, seg: Int64(first / size), count: first % size)
            }
            var duplicates: DuplicateTokens?
            let written = try writeSegments(db, campaign: seq, app: find.text(0, 2), size: size, first: first, carried: carried,
                                            deliveries: deliveries, duplicates: &duplicates, now: now)
            try db.execute("""
                INSERT INTO campaign_parts(campaign, part, sha256, first_idx, devices, skipped) VALUES ($1, $2, $3, $4, $5, $6)
                """, [.int(seq), .integer(part), .text(requestSHA256), .integer(first), .integer(written.count), .integer(written.skipped)])
            try db.execute("UPDATE campaigns SET devices = devices + $2 WHERE seq = $1", [.int(seq), .integer(written.count)])
            var tally = StateTally()
            tally.add(seq, .pending, written.count - written.failed - written.skipped)
            tally.add(seq, .failed, written.failed)
            tally.add(seq, .skipped, written.skipped)
            try tally.apply(db)
            return .appended(PartReceipt(part: part, firstIndex: first, devices: written.count, skipped: written.skipped))
        }
        return outcome
    }

    /// A stored segment's devices and codes, read as they are (not from the cache): they
    /// are about to be written again. Missing, undecodable or of another count than
    /// expected: `segmentCorrupt`, and the part is not stored.
    static func storedSegment(_ db: PGConnection, campaign seq: Int64, seg: Int64,
                              count: Int) throws(StorageError) -> (devices: [SegmentDevice], codes: [UInt8]) {
        let row = try db.execute("""
            SELECT s.first_idx, s.count, s.format, s.tokens, s.bodies, s.checksum, t.codes
            FROM segments s JOIN segment_state t ON t.campaign = s.campaign AND t.seg = s.seg
            WHERE s.campaign = $1 AND s.seg = $2
            """, [.int(seq), .int(seg)])
        guard row.rows > 0 else { throw StorageError(.segmentCorrupt, "segment \(seg) of campaign \(seq) is missing") }
        let devices: [SegmentDevice]
        do throws(SegmentDecodeError) {
            devices = try StoredSegmentRow(firstIndex: Int(row.int(0, 0)), count: Int(row.int(0, 1)), format: Int(row.int(0, 2)),
                                           tokens: row.bytes(0, 3), bodies: row.optionalBytes(0, 4), checksum: row.int(0, 5))
                .devices(campaign: seq, seg: seg)
        } catch {
            throw StorageError(.segmentCorrupt, error.description)
        }
        let codes = row.bytes(0, 6)
        guard devices.count == count, codes.count == count else {
            throw StorageError(.segmentCorrupt, "segment \(seg) of campaign \(seq) has \(devices.count) devices and \(codes.count) codes, expected \(count)")
        }
        return (devices, codes)
    }

    public func finishFilling(campaign id: String, expectedDevices: Int?, transactionalMaxDevices: Int,
                              now: Double) throws(StorageError) -> FillOutcome {
        let outcome = try transaction { db throws(StorageError) -> FillOutcome in
            // The row lock orders this start after any part being appended (which holds it).
            let find = try db.execute("""
                SELECT seq, filling, devices, lane, finished_at IS NOT NULL OR control = 2 FROM campaigns WHERE id = $1 FOR UPDATE
                """, [.text(id)])
            guard find.rows > 0 else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
            let seq = find.int(0, 0)
            guard find.bool(0, 1) else {
                guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                return .unchanged(summary)
            }
            guard !find.bool(0, 4) else { throw StorageError(.notFilling, "campaign \(id) was cancelled or has finished: it cannot be started") }
            let devices = Int(find.int(0, 2))
            guard devices > 0 else { throw StorageError(.notFilling, "campaign \(id) has no device to send: append a part first") }
            // A part stored after the guard read the count: the guard must see the new one.
            if let expectedDevices, expectedDevices != devices {
                guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                return .devicesChanged(summary)
            }
            // Created without a lane (-1): chosen now, by the count and the configured limit.
            let lane = Lane(rawValue: Int(find.int(0, 3))) ?? (devices <= transactionalMaxDevices ? .transactional : .bulk)
            let counts = try Self.counts(db, seqs: [seq])[seq] ?? [:]
            let finished = (counts[.pending] ?? 0) == 0
            try db.execute("UPDATE campaigns SET filling = false, finished_at = $2, lane = $3 WHERE seq = $1",
                           [.int(seq), finished ? .double(now) : .null, .integer(lane.rawValue)])
            if finished { try db.execute("INSERT INTO campaign_events(campaign) VALUES ($1)", [.int(seq)]) }
            guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
            return .started(summary)
        }
        return outcome
    }
}
