import Storage

extension PostgresCampaignStorage {
    /// For `pushgate storage status`: the schema version, every instance that has written
    /// a heartbeat (newest first), and the leases held, by owner. Writes nothing.
    public func status() throws(StorageError) -> StorageStatus {
        try reading { db throws(StorageError) -> StorageStatus in
            let version = try PostgresMigrator.version(db)
            var status = StorageStatus(backend: "postgresql", schemaVersion: version, currentVersion: PostgresSchema.currentVersion,
                                       instances: [], leases: [], queueDepth: nil)
            guard version == PostgresSchema.currentVersion else { return status }
            let seen = try db.execute("SELECT owner, started_at, heartbeat_at FROM instances ORDER BY heartbeat_at DESC, owner")
            status.instances = (0..<seen.rows).map {
                .init(owner: seen.text($0, 0), startedAt: seen.optionalDouble($0, 1), heartbeatAt: seen.optionalDouble($0, 2))
            }
            let held = try db.execute("""
                SELECT coalesce(lease_owner, ''), count(*), min(lease_until), max(lease_until) FROM deliveries
                WHERE state = 1 GROUP BY lease_owner ORDER BY lease_owner
                """)
            status.leases = (0..<held.rows).map {
                .init(owner: held.text($0, 0), deliveries: Int(held.int($0, 1)), firstExpiry: held.double($0, 2), lastExpiry: held.double($0, 3))
            }
            status.queueDepth = try queueDepth(db)
            return status
        }
    }
}
