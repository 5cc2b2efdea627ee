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

        public init(synchronousFull: Bool = true, busyTimeoutMilliseconds: Int32 = 5000, access: Access = .shared) {
            self.synchronousFull = synchronousFull
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.access = access
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

    /// Opens (creating if needed) and migrates the database, as `options.access` allows.
    public init(path: String, options: Options = Options()) throws(StorageError) {
        self.path = path
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
                defer { db.resetStatements() }
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
                                          body, apns_id_prefix, devices, remaining, app, environment, owner, send_at, expires_at, channel)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)
                    """)
                    .bind(.text(campaign.id), .double(campaign.createdAt), .int(campaign.dryRun ? 1 : 0),
                          .text(campaign.message.pushType), .text(campaign.message.topic), .integer(campaign.message.priority),
                          .optional(campaign.message.expiration), .optional(campaign.message.collapseId),
                          .blob(campaign.body), .text(campaign.apnsIDPrefix),
                          .text(campaign.app), .text(campaign.environment), .text(campaign.owner),
                          campaign.sendAt.map { .double($0) } ?? .null, campaign.expiresAt.map { .double($0) } ?? .null,
                          .optional(campaign.message.channel)).run()
                let seq = db.lastInsertRowID
                let checkDead = try db.statement("SELECT EXISTS(SELECT 1 FROM tokens WHERE dead_at_ms IS NOT NULL)")
                let anyDead = try checkDead.step() && checkDead.int(0) == 1
                // Dead for this app, and not registered again since: the same rule as `deadTokens`.
                let lookup = """
                    SELECT dead_at_ms, dead_reason FROM tokens WHERE token = ? AND dead_at_ms IS NOT NULL AND app = ?
                      AND (registered_at_ms IS NULL OR registered_at_ms <= dead_at_ms)
                    """
                let insertSQL = """
                    INSERT INTO deliveries(campaign, idx, token, body, state, status, reason, timestamp_ms, finished_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
                var count = 0
                var skipped = 0
                var remaining = 0
                var tally = StateTally()
                for delivery in deliveries {
                    var state = DeliveryState.pending
                    var reason = delivery.failureReason
                    var timestamp: Int64?
                    if reason != nil {
                        state = .failed
                    } else if anyDead {
                        let find = try db.statement(lookup).bind(.text(delivery.token), .text(campaign.app))
                        if try find.step() {
                            state = .skipped
                            reason = find.text(1)
                            timestamp = find.int(0)
                            skipped += 1
                        }
                    }
                    if state == .pending { remaining += 1 }
                    tally.add(seq, state, 1)
                    try db.statement(insertSQL)
                        .bind(.int(seq), .integer(count), .text(delivery.token), delivery.body.map { .blob($0) } ?? .null,
                              .integer(state.rawValue), .null, .optional(reason), .optional(timestamp),
                              state.isFinal ? .double(now) : .null).run()
                    count += 1
                }
                if campaign.rejectDuplicateTokens {
                    let twice = try db.statement("""
                        SELECT token, min(idx), max(idx) FROM deliveries WHERE campaign = ?
                        GROUP BY token HAVING count(*) > 1 LIMIT 1
                        """).bind(.int(seq))
                    if try twice.step() {
                        throw StorageError(.duplicateToken, "token \(twice.text(0)) is listed twice: devices \(twice.int(1)) and \(twice.int(2)) (counting from 0)")
                    }
                }
                let lane = campaign.lane ?? (count <= campaign.transactionalMaxDevices ? .transactional : .bulk)
                try db.statement("UPDATE campaigns SET devices = ?, remaining = ?, finished_at = ?, lane = ?, rate_per_second = ? WHERE seq = ?")
                    .bind(.integer(count), .integer(remaining), remaining == 0 ? .double(now) : .null, .integer(lane.rawValue),
                          campaign.ratePerSecond.map { .double($0) } ?? .null, .int(seq)).run()
                // Nothing to send (every token dead, every request unbuildable): finished at once.
                if remaining == 0 { try Self.recordFinished(db, campaign: seq) }
                try tally.apply(db)
                return .created(devices: count, skipped: skipped)
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
        lane, rate_per_second, channel
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
        return summary
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
            let columns = "idx, token, state, attempts, status, reason, apns_id, timestamp_ms, next_at, apns_unique_id"
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
            while try page.step() {
                let state = DeliveryState(rawValue: Int(page.int(2))) ?? .pending
                rows.append(DeliveryResultRow(index: Int(page.int(0)), token: page.text(1), state: state, attempts: Int(page.int(3)),
                                              status: page.optionalInt(4).map(Int.init), reason: page.optionalText(5),
                                              apnsID: page.optionalText(6), apnsUniqueID: page.optionalText(9), timestampMilliseconds: page.optionalInt(7),
                                              nextAttemptAt: state == .retrying ? page.double(8) : nil))
            }
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
