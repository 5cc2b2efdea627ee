import Storage
import Synchronization

/// A segmented campaign's devices in PostgreSQL: `segments` (immutable: tokens packed,
/// checksummed) and `segment_state` (lease, fencing number, progress, one code per device),
/// with `deliveries` rows only for the devices that need one. See `SegmentCode`.
struct PGSegmentState {
    var seg: Int64
    var count: Int
    var leaseOwner: String?
    var leaseUntil: Double?
    var lease: Int64
    var handed: Int
    var reached: Int
    var codes: [UInt8]

    static let columns = columns(of: "")

    /// The columns `init` reads, each after `table` (`"s."`).
    static func columns(of table: String) -> String {
        ["seg", "count", "lease_owner", "lease_until", "lease", "handed", "reached", "codes"].map { table + $0 }.joined(separator: ", ")
    }

    init(_ rows: PGResult, _ i: Int, offset: Int = 0) {
        seg = rows.int(i, offset)
        count = Int(rows.int(i, offset + 1))
        leaseOwner = rows.optionalText(i, offset + 2)
        leaseUntil = rows.optionalDouble(i, offset + 3)
        lease = rows.int(i, offset + 4)
        handed = Int(rows.int(i, offset + 5))
        reached = Int(rows.int(i, offset + 6))
        codes = rows.bytes(i, offset + 7)
        // A codes column of the wrong length is read as "nothing open": never a guessed device.
        if codes.count != count { codes = [UInt8](repeating: SegmentCode.row.rawValue, count: count) }
    }

    var isOpen: Bool { codes.contains(SegmentCode.open.rawValue) }

    /// Writes lease, progress and codes back (one statement); a settled segment leaves the
    /// open index and its lease is cleared.
    func store(_ db: PGConnection, campaign: Int64, now: Double) throws(StorageError) {
        let open = isOpen
        try db.execute("""
            UPDATE segment_state SET lease_owner = $3, lease_until = $4, lease = $5, handed = $6, reached = $7, codes = $8,
                open = $9, updated_at = $10
            WHERE campaign = $1 AND seg = $2
            """, [.int(campaign), .int(seg), open ? .optional(leaseOwner) : .null, open ? .optional(leaseUntil) : .null,
                  .int(lease), .integer(handed), .integer(reached), .bytes(codes), .text(open ? "t" : "f"), .double(now)])
    }
}

extension DecodedSegments {
    /// The devices of a stored segment, read with `db` when they are not here.
    func devices(_ db: PGConnection, campaign: Int64, seg: Int64, count: Int) throws(StorageError) -> Result<[SegmentDevice], SegmentDecodeError> {
        try devices(campaign: campaign, seg: seg, count: count) { () throws(StorageError) -> StoredSegmentRow? in
            let row = try db.execute("SELECT first_idx, count, format, tokens, bodies, checksum FROM segments WHERE campaign = $1 AND seg = $2",
                                     [.int(campaign), .int(seg)])
            guard row.rows > 0 else { return nil }
            return StoredSegmentRow(firstIndex: Int(row.int(0, 0)), count: Int(row.int(0, 1)), format: Int(row.int(0, 2)),
                                    tokens: row.bytes(0, 3), bodies: row.optionalBytes(0, 4), checksum: row.int(0, 5))
        }
    }
}

/// What a segmented campaign's intake writes, a few segments per statement: the immutable
/// rows, their state rows, and the exception rows of devices skipped or failed at intake.
struct SegmentWriter {
    let campaign: Int64
    let segmentSize: Int
    let app: String
    let checkDead: Bool
    let now: Double
    /// Segments packed but not yet written (a few, as bytes: never a segment's devices).
    private var packed: [(seg: Int64, first: Int, segment: PackedSegment, codes: [UInt8])] = []
    private var exceptions: [(idx: Int, token: String, state: DeliveryState, reason: String?, timestamp: Int64?)] = []
    private(set) var failed = 0
    private(set) var skipped = 0
    static let segmentsPerStatement = 8

    init(campaign: Int64, segmentSize: Int, app: String, checkDead: Bool, now: Double) {
        self.campaign = campaign
        self.segmentSize = segmentSize
        self.app = app
        self.checkDead = checkDead
        self.now = now
    }

    /// Packs one segment's devices (`first`: the first one's index) and writes when enough
    /// are waiting. `carried`: the segment's devices stored before (a campaign being filled
    /// continues its last segment), with their codes; the segment is written again whole.
    mutating func add(_ db: PGConnection, first: Int, devices: [NewDelivery],
                      carried: (devices: [SegmentDevice], codes: [UInt8]) = ([], [])) throws(StorageError) {
        guard !devices.isEmpty else { return }
        let seg = Int64(first / segmentSize)
        precondition(first % segmentSize == carried.devices.count && carried.codes.count == carried.devices.count,
                     "a segment is continued from its stored devices")
        var codes = [UInt8](repeating: SegmentCode.open.rawValue, count: devices.count)
        var dead: [String: (reason: String, at: Int64)] = [:]
        if checkDead {
            // Dead for this app, and not registered again since: the same rule as `deadTokens`.
            let found = try db.execute("""
                SELECT token, dead_reason, dead_at_ms FROM tokens
                WHERE token = ANY($1::text[]) AND dead_at_ms IS NOT NULL AND app = $2
                  AND (registered_at_ms IS NULL OR registered_at_ms <= dead_at_ms)
                """, [.text(PGArray.texts(devices.filter { $0.failureReason == nil }.map(\.token))), .text(app)])
            for i in 0..<found.rows { dead[found.text(i, 0)] = (found.optionalText(i, 1) ?? "", found.int(i, 2)) }
        }
        for (p, device) in devices.enumerated() {
            if let reason = device.failureReason {
                codes[p] = SegmentCode.row.rawValue
                exceptions.append((first + p, device.token, .failed, reason, nil))
                failed += 1
            } else if let death = dead[device.token] {
                codes[p] = SegmentCode.row.rawValue
                exceptions.append((first + p, device.token, .skipped, death.reason, death.at))
                skipped += 1
            }
        }
        let start = first - carried.devices.count
        let segment = SegmentCodec.pack(carried.devices + devices.lazy.map { SegmentDevice(token: $0.token, body: $0.body) },
                                        campaign: campaign, segment: seg, firstIndex: start)
        packed.append((seg, start, segment, carried.codes + codes))
        if packed.count >= Self.segmentsPerStatement || exceptions.count >= 4096 { try flush(db) }
    }

    /// Writes what is waiting.
    mutating func flush(_ db: PGConnection) throws(StorageError) {
        if !packed.isEmpty {
            var rows: [String] = []
            var states: [String] = []
            var values: [PGValue] = []
            var stateValues: [PGValue] = []
            for (seg, first, segment, codes) in packed {
                let n = values.count
                rows.append("($\(n + 1)::bigint, $\(n + 2)::int, $\(n + 3)::int, $\(n + 4)::int, $\(n + 5)::smallint, $\(n + 6)::bytea, $\(n + 7)::bytea, $\(n + 8)::bigint)")
                values += [.int(campaign), .int(seg), .integer(first), .integer(segment.count), .integer(segment.format.rawValue),
                           .bytes(segment.tokens), segment.bodies.map { .bytes($0) } ?? .null, .int(segment.checksum)]
                let m = stateValues.count
                let open = codes.contains(SegmentCode.open.rawValue)
                states.append("($\(m + 1)::bigint, $\(m + 2)::int, $\(m + 3)::int, $\(m + 4)::bytea, $\(m + 5)::boolean)")
                stateValues += [.int(campaign), .int(seg), .integer(segment.count), .bytes(codes), .text(open ? "t" : "f")]
            }
            // A conflict is the last segment of a campaign being filled, written again longer
            // (never leased: nothing is claimed from a campaign being filled).
            try db.execute("INSERT INTO segments(campaign, seg, first_idx, count, format, tokens, bodies, checksum) VALUES "
                           + rows.joined(separator: ", ") + """
                 ON CONFLICT (campaign, seg) DO UPDATE SET count = excluded.count, format = excluded.format,
                    tokens = excluded.tokens, bodies = excluded.bodies, checksum = excluded.checksum
                """, values)
            try db.execute("INSERT INTO segment_state(campaign, seg, count, codes, open) VALUES " + states.joined(separator: ", ") + """
                 ON CONFLICT (campaign, seg) DO UPDATE SET count = excluded.count, codes = excluded.codes, open = excluded.open
                """, stateValues)
            packed.removeAll(keepingCapacity: true)
        }
        if !exceptions.isEmpty {
            try db.execute("""
                INSERT INTO deliveries(campaign, idx, token, state, reason, timestamp_ms, finished_at)
                SELECT $1, u.idx, u.token, u.state, u.reason, u.ts, $2
                FROM unnest($3::int[], $4::text[], $5::smallint[], $6::text[], $7::bigint[]) AS u(idx, token, state, reason, ts)
                """, [.int(campaign), .double(now), .text(PGArray.integers(exceptions.map { Int64($0.idx) })),
                      .text(PGArray.texts(exceptions.map(\.token))), .text(PGArray.integers(exceptions.map { Int64($0.state.rawValue) })),
                      .text(PGArray.texts(exceptions.map(\.reason))), .text(PGArray.optionalIntegers(exceptions.map(\.timestamp)))])
            exceptions.removeAll(keepingCapacity: true)
        }
    }
}

extension PostgresCampaignStorage {
    /// Streams `deliveries` into segments of `size` from index `first`; returns how many
    /// devices, how many failed at intake and how many were skipped. `first` mid-segment:
    /// `carried` holds that segment's stored devices and codes, and it is written again with
    /// the new ones after them (device idx stays in segment idx / size, as on SQLite).
    /// `duplicates`: set when duplicates are refused.
    func writeSegments(_ db: PGConnection, campaign seq: Int64, app: String, size: Int, first: Int,
                       carried: (devices: [SegmentDevice], codes: [UInt8]) = ([], []), deliveries: some Sequence<NewDelivery>,
                       duplicates: inout DuplicateTokens?, now: Double) throws(StorageError) -> (count: Int, failed: Int, skipped: Int) {
        precondition(first % size == carried.devices.count, "a segment is continued from its stored devices")
        let anyDead = try db.execute("SELECT EXISTS(SELECT 1 FROM tokens WHERE dead_at_ms IS NOT NULL)").bool(0, 0)
        var writer = SegmentWriter(campaign: seq, segmentSize: size, app: app, checkDead: anyDead, now: now)
        var carried = carried
        var batch: [NewDelivery] = []
        batch.reserveCapacity(size)
        var index = first
        for delivery in deliveries {
            try duplicates?.check(delivery.token, at: index) { (earlier) throws(StorageError) -> String in
                let batchStart = index - batch.count
                if earlier >= batchStart { return batch[earlier - batchStart].token }
                try writer.flush(db)  // an earlier segment, written in this transaction
                return try Self.storedSegment(db, campaign: seq, seg: Int64(earlier / size), count: size).devices[earlier % size].token
            }
            batch.append(delivery)
            index += 1
            if index % size == 0 {
                try writer.add(db, first: index - batch.count, devices: batch, carried: carried)
                carried = ([], [])
                batch.removeAll(keepingCapacity: true)
            }
        }
        try writer.add(db, first: index - batch.count, devices: batch, carried: carried)
        try writer.flush(db)
        return (index - first, writer.failed, writer.skipped)
    }

    /// Hands out up to `n` open devices of a segmented campaign: segments this instance
    /// holds, then expired ones (taken over: fencing number + 1), then unleased ones, in
    /// segment order, each locked only for this transaction and skipped while another one
    /// holds it. Returns the claims, or the decode error of a segment that does not decode
    /// (nothing of that segment is handed out).
    func claimSegments(_ db: PGConnection, campaign: Int64, segmentSize: Int, n: Int, lease: LeaseTerms, now: Double,
                       tally: inout StateTally) throws(StorageError) -> (claimed: [ClaimedDelivery], corrupt: SegmentDecodeError?) {
        var claimed: [ClaimedDelivery] = []
        var after: Int64 = -1
        let until = now + lease.seconds
        while claimed.count < n {
            let want = (n - claimed.count + segmentSize - 1) / segmentSize + 1
            let rows = try db.execute("""
                SELECT \(PGSegmentState.columns) FROM segment_state
                WHERE campaign = $1 AND open AND seg > $2
                  AND (lease_owner IS NULL OR lease_until <= $3 OR (lease_owner = $4 AND handed < count))
                ORDER BY seg LIMIT $5 FOR UPDATE SKIP LOCKED
                """, [.int(campaign), .int(after), .double(now), .text(lease.owner), .integer(want)])
            guard rows.rows > 0 else { break }
            for i in 0..<rows.rows where claimed.count < n {
                var state = PGSegmentState(rows, i)
                after = state.seg
                let held = state.leaseOwner == lease.owner && (state.leaseUntil ?? 0) > now
                if !held {
                    // A takeover (or a first lease): a late answer under the old number records nothing.
                    state.lease += 1
                    state.handed = 0
                }
                let devices: [SegmentDevice]
                switch try segmentCache.devices(db, campaign: campaign, seg: state.seg, count: state.count) {
                case .success(let decoded) where decoded.count == state.count: devices = decoded
                case .success: return (claimed, SegmentDecodeError(campaign: campaign, segment: state.seg, problem: "device count differs from its state's"))
                case .failure(let error): return (claimed, error)
                }
                let first = Int(state.seg) * segmentSize
                var p = state.handed
                while p < state.count && claimed.count < n {
                    if state.codes[p] == SegmentCode.open.rawValue {
                        claimed.append(ClaimedDelivery(campaign: campaign, index: first + p, token: devices[p].token, body: devices[p].body,
                                                       attempt: p < state.reached ? 2 : 1, lease: state.lease))
                        if p >= state.reached { tally.move(campaign, from: .pending, to: .inFlight) }
                    }
                    p += 1
                }
                while p < state.count && state.codes[p] != SegmentCode.open.rawValue { p += 1 }
                state.handed = p
                state.reached = max(state.reached, p)
                state.leaseOwner = lease.owner
                state.leaseUntil = until
                try state.store(db, campaign: campaign, now: now)
            }
            if rows.rows < want { break }
        }
        return (claimed, nil)
    }

    /// Marks a campaign failed because a segment does not decode: claims skip it from now
    /// on, and `closeStopped` ends its open devices `failed` with reason `segmentCorrupt`.
    static func failCampaign(_ db: PGConnection, _ error: SegmentDecodeError) throws(StorageError) {
        try db.execute("UPDATE campaigns SET failure = $2 WHERE seq = $1 AND failure IS NULL", [.int(error.campaign), .text(error.description)])
    }

    static let segmentCorruptReason = "segmentCorrupt"

    /// What recording a campaign's results needs of it: its segment size (0: a row per
    /// device), apns-id prefix, app (whose dead tokens they are) and push type.
    typealias SegmentInfo = (size: Int, prefix: String, app: String, pushType: String)

    /// The campaigns' segment sizes, apns-id prefixes, apps and push types.
    static func segmentInfo(_ db: PGConnection, campaigns: [Int64]) throws(StorageError) -> [Int64: SegmentInfo] {
        guard !campaigns.isEmpty else { return [:] }
        let find = try db.execute("SELECT seq, segment_size, apns_id_prefix, app, push_type FROM campaigns WHERE seq = ANY($1::bigint[])",
                                  [.text(PGArray.integers(campaigns))])
        var info: [Int64: SegmentInfo] = [:]
        for i in 0..<find.rows { info[find.int(i, 0)] = (Int(find.int(i, 1)), find.text(i, 2), find.text(i, 3), find.text(i, 4)) }
        return info
    }

    /// Records the updates of segmented campaigns: one locked read and one write per
    /// segment, in key order. A delivered device (the derived apns-id, no unique id)
    /// becomes a code; any other result becomes its exception row. Updates of devices that
    /// already have a row are returned, for the row path; stale ones (an older fencing
    /// number, an already coded device) are dropped.
    func recordSegments(_ db: PGConnection, _ updates: [DeliveryUpdate], info: [Int64: SegmentInfo], now: Double,
                        tally: inout StateTally, settled: inout Set<Int64>,
                        dead: inout [(update: DeliveryUpdate, token: String, badToken: Bool)]) throws(StorageError) -> (rows: [DeliveryUpdate], counted: Int) {
        struct SegKey: Hashable, Comparable {
            var campaign: Int64
            var seg: Int64
            static func < (a: SegKey, b: SegKey) -> Bool { (a.campaign, a.seg) < (b.campaign, b.seg) }
        }
        // The updates by segment, a segment looked up once per run of it.
        var slots = KeyedSlots<SegKey>()
        var groups: [[DeliveryUpdate]] = []
        var last: (campaign: Int64, size: Int)?
        for update in updates {
            if last?.campaign != update.campaign { last = (update.campaign, info[update.campaign]?.size ?? 0) }
            guard let size = last?.size, size > 0, update.index >= 0 else { continue }
            let key = SegKey(campaign: update.campaign, seg: Int64(update.index / size))
            if let g = slots.slot(of: key) {
                groups[g].append(update)
            } else {
                _ = slots.add(key)
                groups.append([update])
            }
        }
        let keys = slots.keys.sorted()
        guard !keys.isEmpty else { return ([], 0) }
        // A turn's results mostly fall in one or two segments.
        let segs = PGArray.rows(keys.map { [$0.campaign, $0.seg] }, types: ["bigint", "int"], from: 1)
        let locked = try db.execute("""
            SELECT s.campaign, \(PGSegmentState.columns(of: "s."))
            FROM segment_state s WHERE (s.campaign, s.seg) IN \(segs.sql)
            ORDER BY s.campaign, s.seg FOR UPDATE OF s
            """, segs.values)
        var rowUpdates: [DeliveryUpdate] = []
        var counted = 0
        var exceptions: [(update: DeliveryUpdate, token: String, attempts: Int, lease: Int64)] = []
        for i in 0..<locked.rows {
            let campaign = locked.int(i, 0)
            var state = PGSegmentState(locked, i, offset: 1)
            guard let (size, prefix, _, _) = info[campaign], let g = slots.slot(of: SegKey(campaign: campaign, seg: state.seg)) else { continue }
            let first = Int(state.seg) * size
            var changed = false
            var anyFinal = false
            for update in groups[g] {
                let p = update.index - first
                guard p >= 0, p < state.count else { continue }
                let code = state.codes[p]
                if code == SegmentCode.row.rawValue { rowUpdates.append(update); continue }
                guard code == SegmentCode.open.rawValue, update.lease == state.lease, p < state.handed else { continue }
                if let plain = SegmentCode.plain(for: update, apnsIDPrefix: prefix) {
                    state.codes[p] = plain.rawValue
                } else {
                    let devices: [SegmentDevice]
                    switch try segmentCache.devices(db, campaign: campaign, seg: state.seg, count: state.count) {
                    case .success(let decoded) where decoded.count == state.count: devices = decoded
                    case .success: try Self.failCampaign(db, SegmentDecodeError(campaign: campaign, segment: state.seg, problem: "device count differs from its state's")); continue
                    case .failure(let error): try Self.failCampaign(db, error); continue
                    }
                    state.codes[p] = SegmentCode.row.rawValue
                    exceptions.append((update, devices[p].token, update.refundAttempt ? 0 : 1, state.lease))
                    if update.state == .unregistered { dead.append((update, devices[p].token, false)) }
                    if update.state == .failed, update.reason == Self.badDeviceToken { dead.append((update, devices[p].token, true)) }
                }
                tally.move(campaign, from: .inFlight, to: update.state)
                anyFinal = anyFinal || update.state.isFinal
                counted += 1
                changed = true
            }
            if anyFinal { settled.insert(campaign) }
            if changed {
                if !state.isOpen { state.leaseOwner = nil; state.leaseUntil = nil }
                try state.store(db, campaign: campaign, now: now)
            }
        }
        if !exceptions.isEmpty {
            try db.execute("""
                INSERT INTO deliveries(campaign, idx, token, state, status, reason, apns_id, apns_unique_id, timestamp_ms, next_at,
                                       finished_at, attempts, lease)
                SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::smallint[], $5::int[], $6::text[], $7::text[], $8::text[],
                                     $9::bigint[], $10::float8[], $11::float8[], $12::int[], $13::bigint[])
                """, [
                    .text(PGArray.integers(exceptions.map(\.update.campaign))),
                    .text(PGArray.integers(exceptions.map { Int64($0.update.index) })),
                    .text(PGArray.texts(exceptions.map(\.token))),
                    .text(PGArray.integers(exceptions.map { Int64($0.update.state.rawValue) })),
                    .text(PGArray.optionalIntegers(exceptions.map { $0.update.status.map(Int64.init) })),
                    .text(PGArray.texts(exceptions.map(\.update.reason))),
                    .text(PGArray.texts(exceptions.map(\.update.apnsID))),
                    .text(PGArray.texts(exceptions.map(\.update.apnsUniqueID))),
                    .text(PGArray.optionalIntegers(exceptions.map(\.update.timestampMilliseconds))),
                    .text(PGArray.doubles(exceptions.map { $0.update.nextAttemptAt ?? now })),
                    .text(PGArray.doubles(exceptions.map { $0.update.state.isFinal ? now : nil })),
                    .text(PGArray.integers(exceptions.map { Int64($0.attempts) })),
                    .text(PGArray.integers(exceptions.map(\.lease))),
                ])
        }
        return (rowUpdates, counted)
    }
}
