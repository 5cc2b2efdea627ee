import Synchronization

/// `CampaignStorage` in one SQLite file (WAL). One connection writes, one reads, each
/// behind its own lock, so status pages never wait for the dispatcher's commits.
///
/// SQLite is one process's store: the process that runs the outbox opens it `.owner`,
/// which holds `InstanceLock`, and a second owner is refused (`inUse`, naming the first).
/// `send` and `jwt` open it `.shared` (they only share the provider token, written under
/// SQLite's own lock); `campaigns` opens it `.readOnly`: no writer, no migration.
public final class SQLiteCampaignStorage: CampaignStorage {
    public enum Access: Sendable, Equatable {
        /// The one process running the outbox, named in the lock file.
        case owner(InstanceID)
        /// Reads and the shared provider token; migrates only while no owner runs.
        case shared
        /// Reads only; never migrates; refuses a schema it does not know.
        case readOnly
    }

    public struct Options: Sendable {
        /// FULL (the default): a commit — and so a 202 — survives power loss, at one WAL
        /// fsync per commit. NORMAL survives a process crash only.
        public var synchronousFull: Bool
        public var busyTimeoutMilliseconds: Int32
        public var access: Access
        /// Devices per segment of new campaigns (`SegmentLayout.devicesPerSegment`; tests use
        /// small ones to cross segment boundaries with a few devices).
        public var segmentSize: Int

        public init(synchronousFull: Bool = true, busyTimeoutMilliseconds: Int32 = 5000, access: Access = .shared,
                    segmentSize: Int = SegmentLayout.devicesPerSegment) {
            self.synchronousFull = synchronousFull
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.access = access
            self.segmentSize = max(1, segmentSize)
        }
    }

    public let path: String
    /// nil when read-only.
    private let writer: Mutex<SQLiteDatabase?>
    let reader: Mutex<SQLiteDatabase>
    private let lock: InstanceLock?
    /// Why the last write failed; nil after a write that worked (what readiness reports
    /// without writing anything itself).
    let lastWriteFailure = Mutex<String?>(nil)
    /// The writing connection's WAL bytes, as of its last write (`journalBytesWritten`).
    private let walBytes = Atomic<Int64>(0)
    /// Devices per segment of the campaigns this storage writes.
    let segmentSize: Int
    /// The segments decoded last (a claim and the record after it read the same ones).
    let decoded = DecodedSegments()

    /// Opens (creating if needed) and migrates the database, as `options.access` allows.
    public init(path: String, options: Options = Options()) throws(StorageError) {
        self.path = path
        segmentSize = options.segmentSize
        switch options.access {
        case .owner(let me):
            lock = try InstanceLock(databasePath: path, owner: me)
        case .shared, .readOnly:
            lock = nil
        }
        if options.access == .readOnly {
            let read = try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
            let version = try Migrator.version(read)
            read.resetStatements()
            if version != Schema.currentVersion {
                throw StorageError(version > Schema.currentVersion ? .schemaTooNew : .schemaTooOld,
                                   "database schema version \(version) is not this pushgate's \(Schema.currentVersion)"
                                   + (version < Schema.currentVersion ? "; start pushgate serve once to migrate it" : ""))
            }
            writer = Mutex(nil)
            reader = Mutex(read)
            return
        }
        let write = try SQLiteDatabase(path: path, synchronous: options.synchronousFull ? .full : .normal,
                                       busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
        if options.access == .shared, try Migrator.version(write) != Schema.currentVersion,
           let owner = InstanceLock.holder(databasePath: path) {
            throw StorageError(.inUse, "storage in use by \(owner), which must be stopped before the database is migrated")
        }
        try Migrator.migrate(write)
        // The version query's statement would otherwise keep a read snapshot open, and a
        // later write transaction would fail once another process has written.
        write.resetStatements()
        let read = try SQLiteDatabase(path: path, readOnly: true, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
        writer = Mutex(write)
        reader = Mutex(read)
    }

    /// Runs `body` on the reading connection, leaving no statement open afterwards.
    public var journalBytesWritten: Int64? { walBytes.load(ordering: .relaxed) }

    func reading<T>(_ body: (SQLiteDatabase) throws(StorageError) -> T) throws(StorageError) -> T {
        try reader.withLock { db throws(StorageError) in
            defer { db.resetStatements() }
            return try body(db)
        }
    }

    /// Runs `body` on the writing connection, leaving no statement open afterwards.
    func writing<T>(_ body: (SQLiteDatabase) throws(StorageError) -> T) throws(StorageError) -> T {
        do {
            let result = try writer.withLock { connection throws(StorageError) in
                guard let db = connection else { throw StorageError(.notWritable, "\(path) is open read-only") }
                defer {
                    db.resetStatements()
                    walBytes.store(db.walBytesWritten, ordering: .relaxed)
                }
                return try body(db)
            }
            lastWriteFailure.withLock { $0 = nil }
            return result
        } catch {
            lastWriteFailure.withLock { $0 = error.description }
            throw error
        }
    }

    /// The schema version the file is at.
    public func schemaVersion() throws(StorageError) -> Int {
        try reading { db throws(StorageError) in try Migrator.version(db) }
    }

    // MARK: Campaigns

    public func insert(_ campaign: NewCampaign, deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> InsertOutcome {
        try writing { db throws(StorageError) -> InsertOutcome in
            try db.transaction { () throws(StorageError) -> InsertOutcome in
                if let claim = campaign.idempotency {
                    try db.statement("DELETE FROM idempotency_keys WHERE key = ? AND created_at < ?")
                        .bind(.text(claim.key), .double(claim.notBefore)).run()
                    if let existing = try Self.idempotencyRecord(db, key: claim.key) { return .keyAlreadyUsed(existing) }
                    try db.statement("INSERT INTO idempotency_keys(key, request_sha256, campaign_id, created_at) VALUES (?, ?, ?, ?)")
                        .bind(.text(claim.key), .text(claim.requestSHA256), .text(campaign.id), .double(campaign.createdAt)).run()
                }
                try db.statement("""
                    INSERT INTO campaigns(id, created_at, dry_run, push_type, topic, priority, expiration, collapse_id,
                                          body, apns_id_prefix, devices, remaining, app, environment, owner, send_at, expires_at, channel,
                                          segment_size, filling)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                    .bind(.text(campaign.id), .double(campaign.createdAt), .int(campaign.dryRun ? 1 : 0),
                          .text(campaign.message.pushType), .text(campaign.message.topic), .integer(campaign.message.priority),
                          .optional(campaign.message.expiration), .optional(campaign.message.collapseId),
                          .blob(campaign.body), .text(campaign.apnsIDPrefix),
                          .text(campaign.app), .text(campaign.environment), .text(campaign.owner),
                          campaign.sendAt.map { .double($0) } ?? .null, campaign.expiresAt.map { .double($0) } ?? .null,
                          .optional(campaign.message.channel), .integer(segmentSize), .int(campaign.filling ? 1 : 0)).run()
                let seq = db.lastInsertRowID
                var tally = StateTally()
                var writer = SegmentWriter(campaign: seq, size: segmentSize, firstIndex: 0)
                let totals = try Self.intake(db, into: &writer, app: campaign.app, deliveries: deliveries,
                                             rejectDuplicateTokens: campaign.rejectDuplicateTokens, now: now, tally: &tally)
                // A campaign filled in parts has its lane chosen when it starts (-1 until then).
                let lane = campaign.lane?.rawValue
                    ?? (campaign.filling ? -1 : (totals.devices <= campaign.transactionalMaxDevices ? Lane.transactional : .bulk).rawValue)
                let finished = totals.remaining == 0 && !campaign.filling
                try db.statement("UPDATE campaigns SET devices = ?, remaining = ?, finished_at = ?, lane = ?, rate_per_second = ? WHERE seq = ?")
                    .bind(.integer(totals.devices), .integer(totals.remaining), finished ? .double(now) : .null, .integer(lane),
                          campaign.ratePerSecond.map { .double($0) } ?? .null, .int(seq)).run()
                // Nothing to send (every token dead, every request unbuildable): finished at once.
                if finished { try Self.recordFinished(db, campaign: seq) }
                try tally.apply(db)
                return .created(devices: totals.devices, skipped: totals.skipped)
            }
        }
    }

    public func idempotencyRecord(key: String, notBefore: Double) throws(StorageError) -> IdempotencyRecord? {
        try reading { db throws(StorageError) in
            guard let record = try Self.idempotencyRecord(db, key: key), record.createdAt >= notBefore else { return nil }
            return record
        }
    }

    static func idempotencyRecord(_ db: SQLiteDatabase, key: String) throws(StorageError) -> IdempotencyRecord? {
        let find = try db.statement("SELECT request_sha256, campaign_id, created_at FROM idempotency_keys WHERE key = ?").bind(.text(key))
        guard try find.step() else { return nil }
        return IdempotencyRecord(requestSHA256: find.text(0), campaignID: find.text(1), createdAt: find.double(2))
    }

    public func purgeIdempotencyKeys(olderThan time: Double) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.statement("DELETE FROM idempotency_keys WHERE created_at < ?").bind(.double(time)).run()
            return db.changes
        }
    }

    public func campaign(id: String) throws(StorageError) -> CampaignSummary? {
        try reading { db throws(StorageError) in try Self.campaign(db, id: id) }
    }

    static func campaign(_ db: SQLiteDatabase, id: String) throws(StorageError) -> CampaignSummary? {
        try campaign(db, where: "id = ?", .text(id))
    }

    static func campaign(_ db: SQLiteDatabase, seq: Int64) throws(StorageError) -> CampaignSummary? {
        try campaign(db, where: "seq = ?", .int(seq))
    }

    private static func campaign(_ db: SQLiteDatabase, where condition: String, _ value: SQLiteValue) throws(StorageError) -> CampaignSummary? {
        let find = try db.statement("SELECT \(summaryColumns) FROM campaigns WHERE \(condition)").bind(value)
        guard try find.step() else { return nil }
        var summary = Self.summary(find)
        find.reset()
        summary.counts = try Self.counts(db, seq: summary.seq)
        return summary
    }

    public func campaigns(limit: Int, before seq: Int64?, owner: String?, app: String?) throws(StorageError) -> [CampaignSummary] {
        try reading { db throws(StorageError) in
            let list: SQLiteStatement
            // ?3 NULL: every app.
            if let owner {
                list = try db.statement("""
                    SELECT \(Self.summaryColumns) FROM campaigns INDEXED BY campaigns_owner
                    WHERE owner = ?1 AND seq < ?2 AND (?3 IS NULL OR app = ?3) ORDER BY seq DESC LIMIT ?4
                    """).bind(.text(owner), .int(seq ?? Int64.max), .optional(app), .integer(limit))
            } else {
                list = try db.statement("""
                    SELECT \(Self.summaryColumns) FROM campaigns
                    WHERE seq < ?1 AND (?2 IS NULL OR app = ?2) ORDER BY seq DESC LIMIT ?3
                    """).bind(.int(seq ?? Int64.max), .optional(app), .integer(limit))
            }
            var result: [CampaignSummary] = []
            while try list.step() { result.append(Self.summary(list)) }
            for i in result.indices { result[i].counts = try Self.counts(db, seq: result[i].seq) }
            return result
        }
    }

    static let summaryColumns = """
        seq, id, created_at, dry_run, devices, finished_at, app, environment, owner, send_at, expires_at, control, controlled_at,
        lane, rate_per_second, channel, filling, failure
        """

    static func summary(_ row: SQLiteStatement) -> CampaignSummary {
        var summary = CampaignSummary(seq: row.int(0), id: row.text(1), createdAt: row.double(2), dryRun: row.int(3) != 0,
                                      devices: Int(row.int(4)), finishedAt: row.optionalDouble(5), counts: [:],
                                      sendAt: row.optionalDouble(9), expiresAt: row.optionalDouble(10),
                                      control: CampaignControl(rawValue: Int(row.int(11))) ?? .running, controlledAt: row.optionalDouble(12))
        summary.app = row.text(6)
        summary.environment = row.text(7)
        summary.owner = row.text(8)
        summary.lane = Lane(rawValue: Int(row.int(13))) ?? .bulk
        summary.channel = row.optionalText(15)
        summary.ratePerSecond = row.optionalDouble(14)
        summary.filling = row.int(16) != 0
        summary.failure = row.optionalText(17)
        return summary
    }

    public func failedCampaigns(since: Double, limit: Int) throws(StorageError) -> [CampaignSummary] {
        try reading { db throws(StorageError) in
            let list = try db.statement("""
                SELECT \(Self.summaryColumns) FROM campaigns INDEXED BY campaigns_finished
                WHERE finished_at IS NOT NULL AND finished_at >= ? AND failure IS NOT NULL ORDER BY finished_at DESC LIMIT ?
                """).bind(.double(since), .integer(limit))
            var result: [CampaignSummary] = []
            while try list.step() { result.append(Self.summary(list)) }
            list.reset()
            for i in result.indices { result[i].counts = try Self.counts(db, seq: result[i].seq) }
            return result
        }
    }

    public func adoptUnnamedRows(app: String) throws(StorageError) -> Int {
        try writing { db throws(StorageError) in
            try db.transaction { () throws(StorageError) -> Int in
                try db.statement("UPDATE campaigns SET app = ? WHERE app = ''").bind(.text(app)).run()
                let campaigns = db.changes
                try db.statement("UPDATE tokens SET app = ? WHERE app = ''").bind(.text(app)).run()
                return campaigns
            }
        }
    }

    static func counts(_ db: SQLiteDatabase, seq: Int64) throws(StorageError) -> [DeliveryState: Int] {
        let group = try db.statement("SELECT state, n FROM campaign_counts WHERE campaign = ?").bind(.int(seq))
        var counts: [DeliveryState: Int] = [:]
        while try group.step() {
            if let state = DeliveryState(rawValue: Int(group.int(0))) { counts[state] = Int(group.int(1)) }
        }
        return counts
    }

    public func results(campaign seq: Int64, states: Set<DeliveryState>?, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow] {
        try reading { db throws(StorageError) in
            let find = try db.statement("SELECT segment_size, apns_id_prefix, failure IS NOT NULL FROM campaigns WHERE seq = ?").bind(.int(seq))
            guard try find.step() else {
                find.reset()
                return []
            }
            let size = Int(find.int(0))
            let prefix = find.text(1)
            let failed = find.int(2) != 0
            find.reset()
            // A segmented campaign's codes stand for these states; other states are only in rows.
            let coded: Set<DeliveryState> = failed ? [.delivered, .dryRun, .cancelled, .expired, .pending, .inFlight, .failed]
                : [.delivered, .dryRun, .cancelled, .expired, .pending, .inFlight]
            if size > 0, states.map({ !$0.isDisjoint(with: coded) }) ?? true {
                return try segmentedResults(db, campaign: seq, size: size, prefix: prefix, failed: failed, states: states,
                                            offset: offset, limit: limit)
            }
            let columns = Self.resultColumns
            let page: SQLiteStatement
            if let states {
                // Device indices are dense, so the unfiltered page seeks to its first index;
                // a filtered page counts past the rows of earlier pages.
                let list = states.map { String($0.rawValue) }.sorted().joined(separator: ", ")
                page = try db.statement("""
                    SELECT \(columns) FROM deliveries WHERE campaign = ? AND state IN (\(list)) ORDER BY idx LIMIT ? OFFSET ?
                    """).bind(.int(seq), .integer(limit), .integer(offset))
            } else {
                page = try db.statement("""
                    SELECT \(columns) FROM deliveries WHERE campaign = ? AND idx >= ? ORDER BY idx LIMIT ?
                    """).bind(.int(seq), .integer(offset), .integer(limit))
            }
            var rows: [DeliveryResultRow] = []
            while try page.step() { rows.append(Self.resultRow(page)) }
            return rows
        }
    }

    public func reasonCounts(campaign seq: Int64, states: Set<DeliveryState>) throws(StorageError) -> [ReasonCount] {
        guard !states.isEmpty else { return [] }
        return try reading { db throws(StorageError) in
            let list = states.map { String($0.rawValue) }.sorted().joined(separator: ", ")
            let group = try db.statement("""
                SELECT state, reason, count(*) FROM deliveries
                WHERE campaign = ? AND state IN (\(list)) AND reason IS NOT NULL GROUP BY state, reason
                """).bind(.int(seq))
            var counts: [ReasonCount] = []
            while try group.step() {
                if let state = DeliveryState(rawValue: Int(group.int(0))) {
                    counts.append(ReasonCount(state: state, reason: group.text(1), count: Int(group.int(2))))
                }
            }
            group.reset()
            // A campaign failed on a corrupt segment: its open codes read as failed (`segmentCorrupt`).
            if states.contains(.failed), try db.statement("SELECT failure IS NOT NULL FROM campaigns WHERE seq = ?").bind(.int(seq)).firstText() == "1" {
                var n = 0
                let codes = try db.statement("SELECT codes FROM segment_state WHERE campaign = ?").bind(.int(seq))
                while try codes.step() { n += codes.blob(0).reduce(0) { $1 == SegmentCode.open.rawValue ? $0 + 1 : $0 } }
                codes.reset()
                if n > 0 {
                    if let i = counts.firstIndex(where: { $0.state == .failed && $0.reason == Self.segmentCorruptReason }) {
                        counts[i].count += n
                    } else {
                        counts.append(ReasonCount(state: .failed, reason: Self.segmentCorruptReason, count: n))
                    }
                }
            }
            return ReasonCount.ordered(counts)
        }
    }

    // MARK: Health

    public func queueDepth() throws(StorageError) -> Int {
        try reading { db throws(StorageError) in
            let sum = try db.statement("SELECT coalesce(sum(remaining), 0) FROM campaigns WHERE finished_at IS NULL")
            return try sum.step() ? Int(sum.int(0)) : 0
        }
    }

    /// For readiness probes: a read on the database and the outcome of the last real
    /// write. Writes nothing, so a probe can never cause an fsync.
    public func checkReady() -> String? {
        do throws(StorageError) {
            try reading { db throws(StorageError) in _ = try db.statement("SELECT 1").step() }
        } catch {
            return "storage not readable: \(error.description)"
        }
        return lastWriteFailure.withLock { $0 }.map { "storage not writable: the last write failed: \($0)" }
    }

    public func checkWritable(now: Double) -> String? {
        do throws(StorageError) {
            try writing { db throws(StorageError) in
                try db.transaction { () throws(StorageError) in
                    try db.statement("INSERT INTO heartbeat(id, at) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET at = excluded.at")
                        .bind(.double(now)).run()
                }
            }
            return nil
        } catch {
            return "storage not writable: \(error.description)"
        }
    }
}

extension StateTally {
    func apply(_ db: SQLiteDatabase) throws(StorageError) {
        let sql = """
            INSERT INTO campaign_counts(campaign, state, n) VALUES (?, ?, ?)
            ON CONFLICT(campaign, state) DO UPDATE SET n = n + excluded.n
            """
        for change in changes {
            try db.statement(sql).bind(.int(change.campaign), .integer(change.state.rawValue), .integer(change.n)).run()
        }
    }
}
