/// Brings a database to `Schema.currentVersion`, one migration per transaction, and
/// refuses a file from a newer pushgate rather than guess at its meaning.
enum Migrator {
    static func version(_ db: SQLiteDatabase) throws(StorageError) -> Int {
        let read = try db.statement("PRAGMA user_version")
        return try read.step() ? Int(read.int(0)) : 0
    }

    static func migrate(_ db: SQLiteDatabase) throws(StorageError) {
        let current = try version(db)
        guard current <= Schema.currentVersion else {
            throw StorageError(.schemaTooNew, "database schema version \(current) is newer than this pushgate's \(Schema.currentVersion)")
        }
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
    }
}
