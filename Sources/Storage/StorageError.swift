/// A storage failure: a stable code for callers and metrics, the engine's own message
/// (`sqlite3_errmsg`, PostgreSQL's message and SQLSTATE) and SQLite's result code for people.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// The database file could not be opened or created.
        case openFailed
        /// A statement did not compile (a bug, or a database from a newer pushgate).
        case prepareFailed
        /// A statement failed while running.
        case stepFailed
        /// Another connection held the lock longer than the busy timeout.
        case busy
        /// The database was written by a newer pushgate (its schema version is unknown here).
        case schemaTooNew
        /// The database is at an older schema and this access may not migrate it.
        case schemaTooOld
        /// Another process runs the outbox on this database (SQLite has one writer process).
        case inUse
        /// A migration failed; the database is left at the previous version.
        case migrationFailed
        /// The disk is full or the file is read-only.
        case notWritable
        /// A campaign listed the same token twice (nothing was written).
        case duplicateToken
        /// The database server cannot be reached (down, restarting, network): nothing was
        /// written; try again later.
        case unavailable
        /// A campaign filled in parts got a part number again with other devices.
        case partConflict
        /// Devices were sent in parts to a campaign that is not (or no longer) taking them.
        case notFilling
        /// No campaign has that id.
        case campaignNotFound
        /// A stored segment does not decode (checksum, length): its campaign failed.
        case segmentCorrupt
    }

    public let code: Code
    /// SQLite's extended result code, or 0 when the error is pushgate's own.
    public let sqliteCode: Int32
    public let message: String

    public init(_ code: Code, sqliteCode: Int32 = 0, _ message: String) {
        self.code = code
        self.sqliteCode = sqliteCode
        self.message = message
    }

    public var description: String {
        sqliteCode == 0 ? "\(code.rawValue): \(message)" : "\(code.rawValue): \(message) (SQLite code \(sqliteCode))"
    }
}
