#if canImport(Glibc)
import Glibc
#endif

/// What `pushgate storage status` reports: the schema, the instances that use the
/// database, the leases they hold and what becomes of them, and the space of purged rows.
/// Read without migrating or writing anything.
public struct StorageStatus: Sendable, Equatable {
    /// `sqlite` or `postgresql`.
    public var backend: String
    /// The database's schema version, and this pushgate's.
    public var schemaVersion: Int
    public var currentVersion: Int
    public var instances: [Instance]
    public var leases: [Leases]
    /// Deliveries not yet final (nil when the schema is not this pushgate's).
    public var queueDepth: Int?
    /// What becomes of deliveries an instance left in flight when it stopped or died.
    public var recovery: InFlightRecovery
    /// The database's size and how the space of purged rows comes back (nil when the
    /// schema is not this pushgate's).
    public var space: Space?

    public enum InFlightRecovery: String, Sendable, Equatable {
        /// SQLite: one owner at a time, so the next `serve` gives every lease back at start.
        case givenBackAtStart = "start"
        /// PostgreSQL: no instance can tell that another died, so a lease is taken over by
        /// the next claim of any instance once it has expired.
        case takenOverWhenExpired = "lease_expiry"
    }

    public enum Space: Sendable, Equatable {
        /// SQLite: the file's pages and how many are free; retention gives free pages back
        /// to the file system (incremental vacuum).
        case freePages(pages: Int, free: Int, pageSize: Int)
        /// PostgreSQL: the database's size; autovacuum makes purged rows' space reusable
        /// (nothing is given back page by page). The dead rows of `deliveries` it has not
        /// cleared yet, and when it (or a VACUUM) last ran on that table.
        case autovacuum(bytes: Int, deadRows: Int, lastVacuum: Double?)
    }

    public struct Instance: Sendable, Equatable {
        public var owner: String
        /// UNIX seconds; nil when not known.
        public var startedAt: Double?
        public var heartbeatAt: Double?

        public init(owner: String, startedAt: Double?, heartbeatAt: Double?) {
            self.owner = owner
            self.startedAt = startedAt
            self.heartbeatAt = heartbeatAt
        }
    }

    /// Deliveries one owner has claimed and not recorded, how many of those leases have
    /// expired (see `recovery`), and when the first and last of them expire.
    public struct Leases: Sendable, Equatable {
        public var owner: String
        public var deliveries: Int
        public var expired: Int
        public var firstExpiry: Double
        public var lastExpiry: Double

        public init(owner: String, deliveries: Int, expired: Int, firstExpiry: Double, lastExpiry: Double) {
            self.owner = owner
            self.deliveries = deliveries
            self.expired = expired
            self.firstExpiry = firstExpiry
            self.lastExpiry = lastExpiry
        }
    }

    public init(backend: String, schemaVersion: Int, currentVersion: Int, instances: [Instance], leases: [Leases], queueDepth: Int?,
                recovery: InFlightRecovery, space: Space? = nil) {
        self.backend = backend
        self.schemaVersion = schemaVersion
        self.currentVersion = currentVersion
        self.instances = instances
        self.leases = leases
        self.queueDepth = queueDepth
        self.recovery = recovery
        self.space = space
    }
}

extension SQLiteCampaignStorage {
    /// The file's status, read-only: its version, the process holding its owner lock (with
    /// the last heartbeat written), the leases in it (expired as of `now`) and its pages.
    /// nil when there is no file.
    public static func status(path: String, now: Double) throws(StorageError) -> StorageStatus? {
        guard access(path, F_OK) == 0 else { return nil }
        let db = try SQLiteDatabase(path: path, readOnly: true)
        defer { db.resetStatements() }
        let version = try Migrator.version(db)
        var status = StorageStatus(backend: "sqlite", schemaVersion: version, currentVersion: Schema.currentVersion,
                                   instances: [], leases: [], queueDepth: nil, recovery: .givenBackAtStart)
        guard version == Schema.currentVersion else { return status }
        let beat = try db.statement("SELECT at FROM heartbeat WHERE id = 1")
        let heartbeat = try beat.step() ? beat.double(0) : nil
        beat.reset()
        if let holder = InstanceLock.holder(databasePath: path) {
            status.instances = [.init(owner: LeaseTerms(instance: holder, seconds: 0).owner, startedAt: holder.startedAt, heartbeatAt: heartbeat)]
        }
        let held = try db.statement("""
            SELECT lease_owner, count(*), min(lease_until), max(lease_until), sum(lease_until <= ?)
            FROM deliveries INDEXED BY deliveries_lease_expiry
            WHERE state = 1 GROUP BY lease_owner ORDER BY lease_owner
            """).bind(.double(now))
        var byOwner: [String: StorageStatus.Leases] = [:]
        func add(_ owner: String, deliveries: Int, expired: Int, first: Double, last: Double) {
            guard deliveries > 0 else { return }
            if var known = byOwner[owner] {
                known.deliveries += deliveries
                known.expired += expired
                known.firstExpiry = min(known.firstExpiry, first)
                known.lastExpiry = max(known.lastExpiry, last)
                byOwner[owner] = known
            } else {
                byOwner[owner] = .init(owner: owner, deliveries: deliveries, expired: expired, firstExpiry: first, lastExpiry: last)
            }
        }
        while try held.step() {
            add(held.optionalText(0) ?? "", deliveries: Int(held.int(1)), expired: Int(held.int(4)), first: held.double(2), last: held.double(3))
        }
        held.reset()
        // A segment's lease holds the open positions it has handed out.
        let segments = try db.statement("""
            SELECT lease_owner, lease_until, handed, codes FROM segment_state INDEXED BY segment_state_leased
            WHERE open = 1 AND lease_owner IS NOT NULL
            """)
        while try segments.step() {
            let until = segments.double(1)
            let n = segments.blob(3).prefix(Int(segments.int(2))).reduce(0) { $1 == SegmentCode.open.rawValue ? $0 + 1 : $0 }
            add(segments.text(0), deliveries: n, expired: until <= now ? n : 0, first: until, last: until)
        }
        segments.reset()
        status.leases = byOwner.values.sorted { $0.owner < $1.owner }
        let pages = try pageStatistics(db)
        status.space = .freePages(pages: pages.pages, free: pages.freePages, pageSize: pages.pageSize)
        let depth = try db.statement("SELECT coalesce(sum(remaining), 0) FROM campaigns WHERE finished_at IS NULL")
        status.queueDepth = try depth.step() ? Int(depth.int(0)) : 0
        return status
    }
}
