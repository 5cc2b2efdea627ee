#if canImport(Glibc)
import Glibc
#endif
import Storage
import Timing
import Synchronization

/// `CampaignStorage` in a PostgreSQL database that several gateway instances share.
///
/// Instances never wait on each other: claims take rows with `FOR UPDATE SKIP LOCKED`
/// under the existing leases (owner, expiry, fencing number); each connection adds to its
/// own rows of `campaign_counts`; a campaign finishes in a statement run after the commit
/// that recorded its last device, so two instances finishing together cannot both miss it.
public final class PostgresCampaignStorage: CampaignStorage {
    public struct Options: Sendable {
        /// `postgresql://user@host:port/database` (libpq's URL or `key=value` form).
        public var url: String
        /// Overrides the URL's password (read from a file or the environment by the caller).
        public var password: String?
        public var poolSize: Int
        public var connectTimeoutSeconds: Int
        /// Who this instance is: the heartbeat row and the webhook sender lease name it.
        public var instance: String
        /// How long one instance may hold a webhook outbox's open batch without coming back.
        public var webhookLeaseSeconds: Double
        /// Reads only: never migrates, refuses a schema it does not know.
        public var readOnly: Bool
        /// For `storage status`: neither migrates nor refuses another version.
        public var inspectOnly = false
        /// The server-side timeouts and keepalives of every connection (see `PGSessionLimits`).
        public var sessionLimits = PGSessionLimits.standard
        /// Devices per segment of new campaigns (`SegmentLayout.devicesPerSegment`; tests use
        /// a few, to put a few devices in several segments). Each campaign keeps its own.
        public var segmentSize = SegmentLayout.devicesPerSegment
        /// The webhook sender lease's expiry (wall) and the pool's reconnect backoff (monotonic).
        public var clock: any TimeSource

        public init(url: String, password: String? = nil, poolSize: Int = 4, connectTimeoutSeconds: Int = 5,
                    instance: String, webhookLeaseSeconds: Double = 120, readOnly: Bool = false, clock: any TimeSource) {
            self.url = url
            self.clock = clock
            self.password = password
            self.poolSize = poolSize
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.instance = instance
            self.webhookLeaseSeconds = webhookLeaseSeconds
            self.readOnly = readOnly
        }
    }

    public let options: Options
    let pool: PGPool
    /// Why the last write failed; nil after a write that worked.
    let lastWriteFailure = Mutex<String?>(nil)
    /// Per campaign, the last pending device this instance claimed (its `next_at`, `idx`):
    /// the next claim of pending devices starts after it instead of at the campaign's first
    /// index entry, past the entries of every device claimed so far (dead until a vacuum).
    /// Moved only by a claim that committed; dropped once the campaign is finished or gone.
    let pendingFrontiers = Mutex<[Int64: PendingFrontier]>([:])
    /// The last segments decoded (a claim's, read again by the record of their results).
    let segmentCache = DecodedSegments()
    /// Each campaign's segment size and apns-id prefix, as a record reads them: both are
    /// written with the campaign row and never change, so a turn asks only for campaigns
    /// it has not seen (`segmentInfo`).
    let segmentInfoCache = Mutex<[Int64: SegmentInfo]>([:])

    /// Connects and migrates (under the advisory lock), or with `readOnly` checks the
    /// schema is this pushgate's.
    public init(options: Options) throws(StorageError) {
        self.options = options
        pool = try PGPool(.init(url: options.url, password: options.password, size: options.poolSize,
                                connectTimeoutSeconds: options.connectTimeoutSeconds, limits: options.sessionLimits,
                                clock: options.clock))
        try pool.with { db throws(StorageError) in
            if options.inspectOnly { return }
            if options.readOnly {
                let version = try PostgresMigrator.version(db)
                if version != PostgresSchema.currentVersion {
                    throw StorageError(version > PostgresSchema.currentVersion ? .schemaTooNew : .schemaTooOld,
                                       "database schema version \(version) is not this pushgate's \(PostgresSchema.currentVersion)"
                                       + (version < PostgresSchema.currentVersion ? "; run pushgate storage migrate or start pushgate serve once" : ""))
                }
            } else {
                try PostgresMigrator.migrate(db)
            }
        }
    }

    /// The schema version the database is at.
    public func schemaVersion() throws(StorageError) -> Int {
        try pool.with { db throws(StorageError) in try PostgresMigrator.version(db) }
    }

    /// Runs `body` on a pooled connection outside any transaction (one statement commits itself).
    func reading<T>(_ body: (PGConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try pool.with(body)
    }

    /// Runs `body` in one transaction, again (up to 3 times) when PostgreSQL chose it as a
    /// deadlock or serialization victim; records the outcome for readiness.
    func transaction<T>(_ body: (PGConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        var attempt = 0
        while true {
            do throws(StorageError) {
                let result = try pool.with { db throws(StorageError) -> T in
                    try db.execute("BEGIN")
                    do throws(StorageError) {
                        let value = try body(db)
                        try db.execute("COMMIT")
                        return value
                    } catch {
                        _ = try? db.execute("ROLLBACK")
                        throw error
                    }
                }
                lastWriteFailure.withLock { $0 = nil }
                return result
            } catch where error.code == .busy && attempt < 3 {
                attempt += 1
            } catch {
                lastWriteFailure.withLock { $0 = error.description }
                throw error
            }
        }
    }

    /// A single statement outside an explicit transaction, counted as a write for readiness.
    func writing<T>(_ body: (PGConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        do throws(StorageError) {
            let result = try pool.with(body)
            lastWriteFailure.withLock { $0 = nil }
            return result
        } catch {
            lastWriteFailure.withLock { $0 = error.description }
            throw error
        }
    }

    // MARK: Campaigns

    public func insert(_ campaign: NewCampaign, deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> InsertOutcome {
        let outcome = try transaction { db throws(StorageError) -> InsertOutcome in
            if let claim = campaign.idempotency {
                try db.execute("DELETE FROM idempotency_keys WHERE key = $1 AND created_at < $2", [.text(claim.key), .double(claim.notBefore)])
                // Two instances taking the same key at once: the second waits for the first's
                // commit, then finds the key taken.
                let taken = try db.execute("""
                    INSERT INTO idempotency_keys(key, request_sha256, campaign_id, created_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (key) DO NOTHING
                    """, [.text(claim.key), .text(claim.requestSHA256), .text(campaign.id), .double(campaign.createdAt)])
                if taken.changed == 0, let existing = try Self.idempotencyRecord(db, key: claim.key) { return .keyAlreadyUsed(existing) }
            }
            let row = try db.execute("""
                INSERT INTO campaigns(id, created_at, dry_run, push_type, topic, priority, expiration, collapse_id,
                                      body, apns_id_prefix, devices, app, environment, owner, send_at, expires_at, channel)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12, $13, $14, $15, $16) RETURNING seq
                """, [.text(campaign.id), .double(campaign.createdAt), .text(campaign.dryRun ? "t" : "f"),
                      .text(campaign.message.pushType), .text(campaign.message.topic), .integer(campaign.message.priority),
                      .optional(campaign.message.expiration), .optional(campaign.message.collapseId),
                      .bytes(campaign.body), .text(campaign.apnsIDPrefix),
                      .text(campaign.app), .text(campaign.environment), .text(campaign.owner),
                      .optional(campaign.sendAt), .optional(campaign.expiresAt), .optional(campaign.message.channel)])
            let seq = row.int(0, 0)
            // The request may still be arriving while its devices are written: this
            // transaction holds nothing another session waits for but the idempotency key.
            try db.execute("SET LOCAL idle_in_transaction_session_timeout = \(Self.intakeIdleMilliseconds)")
            var duplicates = campaign.rejectDuplicateTokens ? DuplicateTokens() : nil
            let written = try writeSegments(db, campaign: seq, app: campaign.app, size: options.segmentSize, first: 0, deliveries: deliveries,
                                            duplicates: &duplicates, now: now)
            let (count, failed, skipped) = written
            let remaining = count - failed - skipped
            // A campaign filled in parts has its lane chosen when it starts (-1 until then).
            let lane = campaign.lane?.rawValue
                ?? (campaign.filling ? -1 : (count <= campaign.transactionalMaxDevices ? Lane.transactional : .bulk).rawValue)
            // A campaign being filled is finished only by `finishFilling`.
            let finished = remaining == 0 && !campaign.filling
            try db.execute("""
                UPDATE campaigns SET devices = $1, finished_at = $2, lane = $4, rate_per_second = $5, segment_size = $6, filling = $7
                WHERE seq = $3
                """, [.integer(count), finished ? .double(now) : .null, .int(seq), .integer(lane),
                      .optional(campaign.ratePerSecond), .integer(options.segmentSize), .text(campaign.filling ? "t" : "f")])
            // Nothing to send (every token dead, every request unbuildable): finished at once.
            if finished { try db.execute("INSERT INTO campaign_events(campaign) VALUES ($1)", [.int(seq)]) }
            var tally = StateTally()
            tally.add(seq, .pending, remaining)
            tally.add(seq, .failed, failed)
            tally.add(seq, .skipped, skipped)
            try tally.apply(db)
            return .created(devices: count, skipped: skipped)
        }
        return outcome
    }

    /// How long an intake transaction may wait for the rest of its request (the session
    /// limit for every other transaction is much shorter).
    static let intakeIdleMilliseconds = 300_000

    public func idempotencyRecord(key: String, notBefore: Double) throws(StorageError) -> IdempotencyRecord? {
        try reading { db throws(StorageError) in
            guard let record = try Self.idempotencyRecord(db, key: key), record.createdAt >= notBefore else { return nil }
            return record
        }
    }

    static func idempotencyRecord(_ db: PGConnection, key: String) throws(StorageError) -> IdempotencyRecord? {
        let find = try db.execute("SELECT request_sha256, campaign_id, created_at FROM idempotency_keys WHERE key = $1", [.text(key)])
        guard find.rows > 0 else { return nil }
        return IdempotencyRecord(requestSHA256: find.text(0, 0), campaignID: find.text(0, 1), createdAt: find.double(0, 2))
    }

    public func purgeIdempotencyKeys(olderThan time: Double) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.execute("DELETE FROM idempotency_keys WHERE created_at < $1", [.double(time)]).changed
        }
    }

    public func campaign(id: String) throws(StorageError) -> CampaignSummary? {
        try reading { db throws(StorageError) in try Self.campaign(db, where: "id = $1", .text(id)) }
    }

    static func campaign(_ db: PGConnection, seq: Int64) throws(StorageError) -> CampaignSummary? {
        try campaign(db, where: "seq = $1", .int(seq))
    }

    static func campaign(_ db: PGConnection, where condition: String, _ value: PGValue) throws(StorageError) -> CampaignSummary? {
        let find = try db.execute("SELECT \(summaryColumns) FROM campaigns WHERE \(condition)", [value])
        guard find.rows > 0 else { return nil }
        var summary = summary(find, 0)
        summary.counts = try counts(db, seqs: [summary.seq])[summary.seq] ?? [:]
        return summary
    }

    public func campaigns(limit: Int, before seq: Int64?, owner: String?, app: String?) throws(StorageError) -> [CampaignSummary] {
        try reading { db throws(StorageError) in
            // $3 NULL: every owner; $4 NULL: every app.
            let list = try db.execute("""
                SELECT \(Self.summaryColumns) FROM campaigns
                WHERE seq < $1 AND ($3::text IS NULL OR owner = $3) AND ($4::text IS NULL OR app = $4) ORDER BY seq DESC LIMIT $2
                """, [.int(seq ?? Int64.max), .integer(limit), .optional(owner), .optional(app)])
            var result = (0..<list.rows).map { Self.summary(list, $0) }
            let counts = try Self.counts(db, seqs: result.map(\.seq))
            for i in result.indices { result[i].counts = counts[result[i].seq] ?? [:] }
            return result
        }
    }

    static let summaryColumns = """
        seq, id, created_at, dry_run, devices, finished_at, app, environment, owner, send_at, expires_at, control, controlled_at,
        lane, rate_per_second, channel, filling, failure
        """

    static func summary(_ row: PGResult, _ i: Int) -> CampaignSummary {
        var summary = CampaignSummary(seq: row.int(i, 0), id: row.text(i, 1), createdAt: row.double(i, 2), dryRun: row.bool(i, 3),
                                      devices: Int(row.int(i, 4)), finishedAt: row.optionalDouble(i, 5), counts: [:],
                                      sendAt: row.optionalDouble(i, 9), expiresAt: row.optionalDouble(i, 10),
                                      control: CampaignControl(rawValue: Int(row.int(i, 11))) ?? .running,
                                      controlledAt: row.optionalDouble(i, 12))
        summary.app = row.text(i, 6)
        summary.environment = row.text(i, 7)
        summary.owner = row.text(i, 8)
        summary.lane = Lane(rawValue: Int(row.int(i, 13))) ?? .bulk
        summary.channel = row.optionalText(i, 15)
        summary.ratePerSecond = row.optionalDouble(i, 14)
        summary.filling = row.bool(i, 16)
        summary.failure = row.optionalText(i, 17)
        return summary
    }

    public func failedCampaigns(since: Double, limit: Int) throws(StorageError) -> [CampaignSummary] {
        try reading { db throws(StorageError) in
            let list = try db.execute("""
                SELECT \(Self.summaryColumns) FROM campaigns
                WHERE finished_at IS NOT NULL AND finished_at >= $1 AND failure IS NOT NULL ORDER BY finished_at DESC LIMIT $2
                """, [.double(since), .integer(limit)])
            var result = (0..<list.rows).map { Self.summary(list, $0) }
            let counts = try Self.counts(db, seqs: result.map(\.seq))
            for i in result.indices { result[i].counts = counts[result[i].seq] ?? [:] }
            return result
        }
    }

    /// Devices per state of each campaign: a sum over its few shard rows, never over devices.
    static func counts(_ db: PGConnection, seqs: [Int64]) throws(StorageError) -> [Int64: [DeliveryState: Int]] {
        guard !seqs.isEmpty else { return [:] }
        let group = try db.execute("""
            SELECT campaign, state, sum(n) FROM campaign_counts WHERE campaign = ANY($1::bigint[]) GROUP BY campaign, state
            """, [.text(PGArray.integers(seqs))])
        var counts: [Int64: [DeliveryState: Int]] = [:]
        for i in 0..<group.rows {
            let n = Int(group.int(i, 2))
            if n != 0, let state = DeliveryState(rawValue: Int(group.int(i, 1))) { counts[group.int(i, 0), default: [:]][state] = n }
        }
        return counts
    }

    public func adoptUnnamedRows(app: String) throws(StorageError) -> Int {
        try transaction { db throws(StorageError) in
            let campaigns = try db.execute("UPDATE campaigns SET app = $1 WHERE app = ''", [.text(app)]).changed
            try db.execute("UPDATE tokens SET app = $1 WHERE app = ''", [.text(app)])
            return campaigns
        }
    }

    public func results(campaign seq: Int64, states: Set<DeliveryState>?, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow] {
        try reading { db throws(StorageError) in
            let info = try Self.segmentInfo(db, campaigns: [seq])
            if let (size, prefix, _, _) = info[seq], size > 0 {
                return try segmentResults(db, campaign: seq, segmentSize: size, prefix: prefix, states: states, offset: offset, limit: limit)
            }
            let columns = "idx, token, state, attempts, status, reason, apns_id, timestamp_ms, next_at, apns_unique_id"
            let page: PGResult
            if let states {
                // Device indices are dense, so the unfiltered page seeks to its first index;
                // a filtered page counts past the rows of earlier pages.
                page = try db.execute("""
                    SELECT \(columns) FROM deliveries WHERE campaign = $1 AND state = ANY($2::smallint[]) ORDER BY idx LIMIT $3 OFFSET $4
                    """, [.int(seq), .text(PGArray.integers(states.map { Int64($0.rawValue) }.sorted())), .integer(limit), .integer(offset)])
            } else {
                page = try db.execute("SELECT \(columns) FROM deliveries WHERE campaign = $1 AND idx >= $2 ORDER BY idx LIMIT $3",
                                      [.int(seq), .integer(offset), .integer(limit)])
            }
            return (0..<page.rows).map { i in
                let state = DeliveryState(rawValue: Int(page.int(i, 2))) ?? .pending
                return DeliveryResultRow(index: Int(page.int(i, 0)), token: page.text(i, 1), state: state, attempts: Int(page.int(i, 3)),
                                         status: page.optionalInt(i, 4).map(Int.init), reason: page.optionalText(i, 5),
                                         apnsID: page.optionalText(i, 6), apnsUniqueID: page.optionalText(i, 9), timestampMilliseconds: page.optionalInt(i, 7),
                                         nextAttemptAt: state == .retrying ? page.double(i, 8) : nil)
            }
        }
    }

    /// A segmented campaign's page: its segments' devices in index order, each as its code
    /// says, or as its row says when it has one. A filtered page reads codes and rows only,
    /// and decodes just the segments its devices are in.
    private func segmentResults(_ db: PGConnection, campaign seq: Int64, segmentSize size: Int, prefix: String,
                                states: Set<DeliveryState>?, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow] {
        var page: [DeliveryResultRow] = []
        guard limit > 0 else { return page }
        var skip = states == nil ? 0 : max(0, offset)
        let startIndex = states == nil ? max(0, offset) : 0
        var nextSeg = Int64(startIndex / size)
        let batch = 16
        while page.count < limit {
            let segments = try db.execute("""
                SELECT \(PGSegmentState.columns) FROM segment_state WHERE campaign = $1 AND seg >= $2 ORDER BY seg LIMIT $3
                """, [.int(seq), .int(nextSeg), .integer(batch)])
            guard segments.rows > 0 else { break }
            let low = Int(segments.int(0, 0)) * size
            let high = Int(segments.int(segments.rows - 1, 0) + 1) * size
            let found = try db.execute("""
                SELECT idx, token, state, attempts, status, reason, apns_id, timestamp_ms, next_at, apns_unique_id
                FROM deliveries WHERE campaign = $1 AND idx >= $2 AND idx < $3
                """, [.int(seq), .integer(low), .integer(high)])
            var rows: [Int: DeliveryResultRow] = [:]
            for i in 0..<found.rows {
                let state = DeliveryState(rawValue: Int(found.int(i, 2))) ?? .pending
                rows[Int(found.int(i, 0))] = DeliveryResultRow(
                    index: Int(found.int(i, 0)), token: found.text(i, 1), state: state, attempts: Int(found.int(i, 3)),
                    status: found.optionalInt(i, 4).map(Int.init), reason: found.optionalText(i, 5), apnsID: found.optionalText(i, 6),
                    apnsUniqueID: found.optionalText(i, 9), timestampMilliseconds: found.optionalInt(i, 7),
                    nextAttemptAt: state == .retrying ? found.double(i, 8) : nil)
            }
            for i in 0..<segments.rows where page.count < limit {
                let state = PGSegmentState(segments, i)
                nextSeg = state.seg + 1
                let first = Int(state.seg) * size
                var devices: [SegmentDevice]?
                for p in 0..<state.count where page.count < limit && first + p >= startIndex {
                    let index = first + p
                    var row: DeliveryResultRow
                    if state.codes[p] == SegmentCode.row.rawValue, let stored = rows[index] {
                        row = stored
                    } else {
                        let code = SegmentCode(rawValue: state.codes[p]) ?? .open
                        let deviceState = code.state ?? (p < state.reached ? .inFlight : .pending)
                        row = DeliveryResultRow(index: index, token: "", state: deviceState, attempts: 0, status: nil, reason: nil,
                                                apnsID: nil, timestampMilliseconds: nil, nextAttemptAt: nil)
                        switch deviceState {
                        case .delivered:
                            row.attempts = 1
                            row.status = 200
                            row.apnsID = CampaignMessage.apnsID(prefix: prefix, index: index)
                        case .dryRun:
                            row.attempts = 1
                            row.apnsID = CampaignMessage.apnsID(prefix: prefix, index: index)
                        case .inFlight:
                            row.attempts = 1
                        default: break
                        }
                    }
                    if let states, !states.contains(row.state) { continue }
                    if skip > 0 {
                        skip -= 1
                        continue
                    }
                    if row.token.isEmpty && state.codes[p] != SegmentCode.row.rawValue {
                        if devices == nil {
                            // A segment that does not decode shows its devices without a token.
                            if case .success(let decoded) = try segmentCache.devices(db, campaign: seq, seg: state.seg, count: state.count), decoded.count == state.count {
                                devices = decoded
                            } else {
                                devices = []
                            }
                        }
                        if let devices, p < devices.count { row.token = devices[p].token }
                    }
                    page.append(row)
                }
            }
            if segments.rows < batch { break }
        }
        return page
    }

    public func reasonCounts(campaign seq: Int64, states: Set<DeliveryState>) throws(StorageError) -> [ReasonCount] {
        guard !states.isEmpty else { return [] }
        return try reading { db throws(StorageError) in
            let group = try db.execute("""
                SELECT state, reason, count(*) FROM deliveries
                WHERE campaign = $1 AND state = ANY($2::smallint[]) AND reason IS NOT NULL GROUP BY state, reason
                """, [.int(seq), .text(PGArray.integers(states.map { Int64($0.rawValue) }.sorted()))])
            let counts = (0..<group.rows).compactMap { i in
                DeliveryState(rawValue: Int(group.int(i, 0))).map { ReasonCount(state: $0, reason: group.text(i, 1), count: Int(group.int(i, 2))) }
            }
            return ReasonCount.ordered(counts)
        }
    }

    // MARK: Health

    public func queueDepth() throws(StorageError) -> Int {
        try reading { db throws(StorageError) in try queueDepth(db) }
    }

    func queueDepth(_ db: PGConnection) throws(StorageError) -> Int {
        let sum = try db.execute("""
            SELECT coalesce(sum(k.n), 0) FROM campaign_counts k JOIN campaigns c ON c.seq = k.campaign
            WHERE c.finished_at IS NULL AND k.state IN (0, 1, 2)
            """)
        return Int(sum.int(0, 0))
    }

    /// A read on the database and the outcome of the last real write; writes nothing.
    public func checkReady() -> String? {
        do throws(StorageError) {
            try reading { db throws(StorageError) in _ = try db.execute("SELECT 1") }
        } catch {
            return "storage not readable: \(error.description)"
        }
        return lastWriteFailure.withLock { $0 }.map { "storage not writable: the last write failed: \($0)" }
    }

    /// Also this instance's heartbeat, which `pushgate storage status` lists.
    public func checkWritable(now: Double) -> String? {
        do throws(StorageError) {
            _ = try writing { db throws(StorageError) in
                try db.execute("""
                    INSERT INTO instances(owner, started_at, heartbeat_at) VALUES ($1, $2, $2)
                    ON CONFLICT (owner) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                    """, [.text(options.instance), .double(now)])
            }
            return nil
        } catch {
            return "storage not writable: \(error.description)"
        }
    }
}

/// Written at the end of a transaction into this connection's rows, in one statement, in
/// key order (two writers sharing rows lock them in the same order and cannot deadlock).
extension StateTally {
    func apply(_ db: PGConnection) throws(StorageError) {
        let changes = self.changes
        guard !changes.isEmpty else { return }
        try db.execute("""
            INSERT INTO campaign_counts(campaign, state, shard, n)
            SELECT c, s, $4, n FROM unnest($1::bigint[], $2::smallint[], $3::bigint[]) AS u(c, s, n)
            ON CONFLICT (campaign, state, shard) DO UPDATE SET n = campaign_counts.n + excluded.n
            """, [.text(PGArray.integers(changes.map(\.campaign))), .text(PGArray.integers(changes.map { Int64($0.state.rawValue) })),
                  .text(PGArray.integers(changes.map { Int64($0.n) })), .integer(try db.countShard())])
    }
}

extension PGConnection {
    /// This connection's row of every campaign's counts: numbered once per connection from
    /// a sequence, so the connections of a fleet (a few dozen) have rows of their own.
    func countShard() throws(StorageError) -> Int {
        if let shard { return shard }
        let next = try execute("SELECT nextval('count_shards') % 1024")
        shard = Int(next.int(0, 0))
        return shard!
    }
}

/// Array parameters as PostgreSQL's text form (`{1,2,NULL}`, `{"a","b"}`).
enum PGArray {
    /// A few rows of integers for `(a, b) IN …`: up to `listedMost` rows as values, each a
    /// parameter (a statement text per count, which PostgreSQL plans once per connection),
    /// more as arrays unnested (for array parameters PostgreSQL keeps custom plans: it
    /// plans the statement at every call). `types`: each column's SQL type; the
    /// parameters are numbered from `first`.
    static func rows(_ rows: [[Int64]], types: [String], from first: Int) -> (sql: String, values: [PGValue]) {
        if rows.count <= listedMost {
            var n = first - 1
            let listed = rows.map { _ in "(" + types.map { n += 1; return "$\(n)::\($0)" }.joined(separator: ", ") + ")" }
            return ("(" + listed.joined(separator: ", ") + ")", rows.flatMap { $0.map(PGValue.int) })
        }
        let arrays = types.indices.map { "$\(first + $0)::\(types[$0])[]" }.joined(separator: ", ")
        return ("(SELECT * FROM unnest(\(arrays)))", types.indices.map { column in .text(integers(rows.map { $0[column] })) })
    }

    static let listedMost = 4

    static func integers(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    static func optionalIntegers(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    static func doubles(_ values: [Double?]) -> String {
        "{" + values.map { $0.map(PGConnection.text) ?? "NULL" }.joined(separator: ",") + "}"
    }

    static func texts(_ values: [String?]) -> String {
        var out = "{"
        for (i, value) in values.enumerated() {
            if i > 0 { out += "," }
            guard let value else { out += "NULL"; continue }
            out += "\""
            for c in value.unicodeScalars {
                if c == "\"" || c == "\\" { out += "\\" }
                out.unicodeScalars.append(c)
            }
            out += "\""
        }
        return out + "}"
    }
}
