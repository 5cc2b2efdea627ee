internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection. Owns the `sqlite3*` and closes it in `deinit`; caches its
/// prepared statements. Not thread-safe: its owner serialises access (see `SQLiteCampaignStorage`).
final class SQLiteDatabase: @unchecked Sendable {  // every use is under its owner's Mutex
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// `PRAGMA page_size`, read at open: a WAL frame is a page and a 24-byte header.
    private var pageSize: Int64 = 4096

    enum Synchronous: String, Sendable {
        /// fsync the WAL at every commit: a commit survives power loss.
        case full = "FULL"
        /// fsync only at checkpoints: a commit survives a process crash, not power loss.
        case normal = "NORMAL"
    }

    init(path: String, readOnly: Bool = false, synchronous: Synchronous = .full, busyTimeoutMilliseconds: Int32 = 5000) throws(StorageError) {
        let isNew = !readOnly && Self.createPrivately(path)
        var pointer: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else { throw StorageError(.openFailed, sqliteCode: status, "cannot open \(path): out of memory") }
        handle = pointer
        guard status == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(pointer))
            sqlite3_close_v2(pointer)
            throw StorageError(.openFailed, sqliteCode: status, "cannot open \(path): \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        if isNew {
            // Only possible before the file has its first page (WAL mode writes it): retention
            // frees pages and `PRAGMA incremental_vacuum` gives them back in small steps.
            try execute("PRAGMA page_size = 1024")
            try execute("PRAGMA auto_vacuum = INCREMENTAL")
        }
        if !readOnly {
            // WAL: readers never block the writer; one fsync per commit with FULL.
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=\(synchronous.rawValue)")
        }
        try execute("PRAGMA foreign_keys=ON")
        let size = try statement("PRAGMA page_size")
        if try size.step() { pageSize = size.int(0) }
        size.reset()
    }

    /// Bytes this connection wrote to the WAL since it opened: the pages it wrote there
    /// (`SQLITE_DBSTATUS_CACHE_WRITE`, which in WAL mode counts WAL frames only, not a
    /// checkpoint's copies into the database file), each with its frame header.
    var walBytesWritten: Int64 {
        var pages: Int32 = 0
        var highest: Int32 = 0
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_WRITE, &pages, &highest, 0) == SQLITE_OK else { return 0 }
        return Int64(UInt32(bitPattern: pages)) * (pageSize + 24)
    }

    /// The file holds a credential (the shared provider token): a new one is created mode
    /// 0600, and SQLite gives its `-wal` and `-shm` files the same mode.
    /// Returns whether the file is new (created now, or still empty).
    private static func createPrivately(_ path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return true
        }
        var info = stat()
        return stat(path, &info) == 0 && info.st_size == 0
    }

    deinit {
        statements.removeAll()  // finalised before the connection closes
        sqlite3_close_v2(handle)
    }

    /// Runs SQL with no parameters and no rows wanted (several statements allowed).
    func execute(_ sql: String) throws(StorageError) {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw failure(.stepFailed, status, message)
        }
    }

    /// A cached prepared statement, reset and cleared of bindings.
    func statement(_ sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var pointer: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard status == SQLITE_OK, let pointer else {
            throw failure(.prepareFailed, status, "\(lastMessage) in: \(sql)")
        }
        let statement = SQLiteStatement(pointer, database: self)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction (the write lock is taken up front,
    /// so a busy database fails at the start, not half-way); rolls back if it throws.
    func transaction<T>(_ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Resets every cached statement: one left mid-step would hold its read snapshot
    /// open, and in WAL mode this connection would keep seeing old data.
    func resetStatements() {
        for statement in statements.values { statement.reset() }
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func failure(_ code: StorageError.Code, _ status: Int32, _ message: String) -> StorageError {
        let primary = status & 0xFF
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED { return StorageError(.busy, sqliteCode: status, message) }
        if primary == SQLITE_FULL || primary == SQLITE_READONLY || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN {
            return StorageError(.notWritable, sqliteCode: status, message)
        }
        return StorageError(code, sqliteCode: status, message)
    }
}

/// The SQLite library loaded at run time (`3.40.1`), for `pushgate version`.
public enum SQLiteLibrary {
    public static var version: String { String(cString: sqlite3_libversion()) }
}
