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
            status.leases = (0..<held.rows).map {
                .init(owner: held.text($0, 0), deliveries: Int(held.int($0, 1)), expired: Int(held.int($0, 4)),
                      firstExpiry: held.double($0, 2), lastExpiry: held.double($0, 3))
            }
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
