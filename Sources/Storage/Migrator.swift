/// Brings a database to `Schema.currentVersion`, one migration per transaction, and
/// refuses a file from a newer pushgate rather than guess at its meaning.
enum Migrator {
    static func version(_ db: SQLiteDatabase) throws(StorageError) -> Int {
        let read = try db.statement("PRAGMA user_version")
        // Not left open: a DROP in a migration fails while a statement still reads.
        defer { read.reset() }
        return try read.step() ? Int(read.int(0)) : 0
    }

    static func migrate(_ db: SQLiteDatabase) throws(StorageError) {
        let current = try version(db)
        guard current <= Schema.currentVersion else {
            throw StorageError(.schemaTooNew, "database schema version \(current) is newer than this pushgate's \(Schema.currentVersion)")
        }
        // A new file got incremental auto-vacuum when it was created (`SQLiteDatabase`).
        for (index, sql) in Schema.migrations.enumerated() where index >= current {
            do throws(StorageError) {
                try db.transaction { () throws(StorageError) in
                    try db.execute(sql)
                    try db.execute("PRAGMA user_version = \(index + 1)")
                }
            } catch {
                throw StorageError(.migrationFailed, sqliteCode: error.sqliteCode,
                                   "migration to schema version \(index + 1) failed: \(error.message)")
            }
        }
        // An older file is rewritten once (VACUUM, outside any transaction) to turn it on.
        if current > 0 && current < Schema.incrementalVacuumVersion {
            do throws(StorageError) {
                if try autoVacuum(db) != 2 {
                    try db.execute("PRAGMA auto_vacuum = INCREMENTAL")
                    try db.execute("VACUUM")
                }
            } catch {
                throw StorageError(.migrationFailed, sqliteCode: error.sqliteCode,
                                   "turning on incremental auto-vacuum (VACUUM) failed: \(error.message)")
            }
        }
    }

    /// 0 none, 1 full, 2 incremental.
    static func autoVacuum(_ db: SQLiteDatabase) throws(StorageError) -> Int {
        let read = try db.statement("PRAGMA auto_vacuum")
        defer { read.reset() }
        return try read.step() ? Int(read.int(0)) : 0
    }
}
