import Storage

/// A campaign filled in parts (`NewCampaign.filling`): each part's devices are written as
/// segments of their own, from the next segment boundary, in one transaction per part;
/// `campaign_parts` remembers each part's hash so a part sent again is answered as before.
extension PostgresCampaignStorage {
    public func appendDevices(campaign id: String, part: Int, requestSHA256: String,
                              deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> AppendOutcome {
        let outcome = try transaction { db throws(StorageError) -> AppendOutcome in
            // The row lock orders two parts of one campaign arriving through two instances.
            let find = try db.execute("SELECT seq, filling, app FROM campaigns WHERE id = $1 FOR UPDATE", [.text(id)])
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
            guard find.bool(0, 1) else { throw StorageError(.notFilling, "campaign \(id) is not taking devices (it was started or not created to be filled)") }
            try db.execute("SET LOCAL idle_in_transaction_session_timeout = \(Self.intakeIdleMilliseconds)")
            let size = SegmentLayout.devicesPerSegment
            let end = try db.execute("SELECT coalesce(max(first_idx + count), 0) FROM segments WHERE campaign = $1", [.int(seq)]).int(0, 0)
            let first = (Int(end) + size - 1) / size * size
            var duplicates: [String: Int]?
            let written = try writeSegments(db, campaign: seq, app: find.text(0, 2), first: first, deliveries: deliveries,
                                            duplicates: &duplicates, now: now)
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

    public func finishFilling(campaign id: String, now: Double) throws(StorageError) -> FillOutcome {
        let outcome = try transaction { db throws(StorageError) -> FillOutcome in
            let find = try db.execute("SELECT seq, filling, devices FROM campaigns WHERE id = $1 FOR UPDATE", [.text(id)])
            guard find.rows > 0 else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
            let seq = find.int(0, 0)
            guard find.bool(0, 1) else {
                guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
                return .unchanged(summary)
            }
            let devices = Int(find.int(0, 2))
            guard devices > 0 else { throw StorageError(.notFilling, "campaign \(id) has no device to send: append a part first") }
            let counts = try Self.counts(db, seqs: [seq])[seq] ?? [:]
            let finished = (counts[.pending] ?? 0) == 0
            // Its lane was chosen at creation (given, else bulk: a campaign sent in parts is big).
            try db.execute("UPDATE campaigns SET filling = false, finished_at = $2 WHERE seq = $1",
                           [.int(seq), finished ? .double(now) : .null])
            if finished { try db.execute("INSERT INTO campaign_events(campaign) VALUES ($1)", [.int(seq)]) }
            guard let summary = try Self.campaign(db, seq: seq) else { throw StorageError(.campaignNotFound, "no campaign has id \(id)") }
            return .started(summary)
        }
        return outcome
    }
}
