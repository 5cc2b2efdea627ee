import Storage

extension PostgresCampaignStorage {
    /// For `pushgate storage status`: the schema version, every instance that has written
    /// a heartbeat (newest first), the leases held, by owner (expired as of `now`: any
    /// instance's next claim takes those over), and the database's size with what
    /// autovacuum has yet to clear. Writes nothing.
    public func status(now: Double) throws(StorageError) -> StorageStatus {
        try reading { db throws(StorageError) -> StorageStatus in
            let version = try PostgresMigrator.version(db)
            var status = StorageStatus(backend: "postgresql", schemaVersion: version, currentVersion: PostgresSchema.currentVersion,
                                       instances: [], leases: [], queueDepth: nil, recovery: .takenOverWhenExpired)
            guard version == PostgresSchema.currentVersion else { return status }
            let seen = try db.execute("SELECT owner, started_at, heartbeat_at FROM instances ORDER BY heartbeat_at DESC, owner")
            status.instances = (0..<seen.rows).map {
                .init(owner: seen.text($0, 0), startedAt: seen.optionalDouble($0, 1), heartbeatAt: seen.optionalDouble($0, 2))
            }
            let held = try db.execute("""
                SELECT coalesce(lease_owner, ''), count(*), min(lease_until), max(lease_until), count(*) FILTER (WHERE lease_until <= $1)
                FROM deliveries WHERE state = 1 GROUP BY lease_owner ORDER BY lease_owner
                """, [.double(now)])
            var leases: [String: StorageStatus.Leases] = [:]
            for i in 0..<held.rows {
                leases[held.text(i, 0)] = .init(owner: held.text(i, 0), deliveries: Int(held.int(i, 1)), expired: Int(held.int(i, 4)),
                                                firstExpiry: held.double(i, 2), lastExpiry: held.double(i, 3))
            }
            // Segments held: their devices handed out and not yet recorded.
            let segments = try db.execute("""
                SELECT \(PGSegmentState.columns) FROM segment_state WHERE open AND lease_owner IS NOT NULL ORDER BY lease_owner
                """)
            for i in 0..<segments.rows {
                let state = PGSegmentState(segments, i)
                guard let owner = state.leaseOwner, let until = state.leaseUntil else { continue }
                let inFlight = state.codes[0..<min(state.handed, state.count)].filter { $0 == SegmentCode.open.rawValue }.count
                guard inFlight > 0 else { continue }
                var lease = leases[owner] ?? StorageStatus.Leases(owner: owner, deliveries: 0, expired: 0, firstExpiry: until, lastExpiry: until)
                lease.deliveries += inFlight
                if until <= now { lease.expired += inFlight }
                lease.firstExpiry = min(lease.firstExpiry, until)
                lease.lastExpiry = max(lease.lastExpiry, until)
                leases[owner] = lease
            }
            status.leases = leases.keys.sorted().map { leases[$0]! }
            // The statistics views lag a commit by up to a second; good enough for an operator.
            let space = try db.execute("""
                SELECT pg_database_size(current_database()), coalesce(s.n_dead_tup, 0),
                       extract(epoch FROM greatest(s.last_autovacuum, s.last_vacuum))::float8
                FROM (SELECT 1) one LEFT JOIN pg_stat_user_tables s ON s.relid = 'deliveries'::regclass
                """)
            status.space = .autovacuum(bytes: Int(space.int(0, 0)), deadRows: Int(space.int(0, 1)), lastVacuum: space.optionalDouble(0, 2))
            status.queueDepth = try queueDepth(db)
            return status
        }
    }
}
