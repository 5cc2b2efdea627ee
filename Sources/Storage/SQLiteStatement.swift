internal import CSQLite

/// A prepared statement; finalised in `deinit`. Parameters are bound by 1-based index,
/// columns read by 0-based index, as in SQLite's C API.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let database: SQLiteDatabase
    /// The first failed bind since the last reset; `step` reports it instead of running
    /// with a parameter left NULL.
    private var bindFailure: Int32?

    init(_ handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        bindFailure = nil
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    @discardableResult
    func bind(_ values: SQLiteValue...) -> SQLiteStatement {
        for (i, value) in values.enumerated() { bind(value, at: Int32(i + 1)) }
        return self
    }

    func bind(_ value: SQLiteValue, at index: Int32) {
        let status: Int32
        switch value {
        case .null: status = sqlite3_bind_null(handle, index)
        case .int(let n): status = sqlite3_bind_int64(handle, index, n)
        case .double(let d): status = sqlite3_bind_double(handle, index, d)
        case .text(let s): status = sqlite3_bind_text(handle, index, s, -1, pg_sqlite_transient())
        case .blob(let bytes):
            status = bytes.withUnsafeBytes { raw in
                // A zero-length blob still needs a non-null pointer to be a blob, not NULL.
                raw.count == 0 ? sqlite3_bind_zeroblob(handle, index, 0)
                    : sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(clamping: raw.count), pg_sqlite_transient())
            }
        }
        if status != SQLITE_OK && bindFailure == nil { bindFailure = status }
    }

    /// Steps once: true when a row is ready, false when done.
    func step() throws(StorageError) -> Bool {
        if let failure = bindFailure {
            throw database.failure(.stepFailed, failure, "cannot bind a parameter: " + String(cString: sqlite3_errstr(failure)))
        }
        let status = sqlite3_step(handle)
        if status == SQLITE_ROW { return true }
        if status == SQLITE_DONE { return false }
        throw database.failure(.stepFailed, status, database.lastMessage)
    }

    /// Runs to completion, ignoring rows.
    func run() throws(StorageError) {
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func optionalBlob(_ column: Int32) -> [UInt8]? { isNull(column) ? nil : blob(column) }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    static func integer(_ n: Int) -> SQLiteValue { .int(Int64(n)) }
    static func optional(_ n: Int64?) -> SQLiteValue { n.map { .int($0) } ?? .null }
    static func optional(_ s: String?) -> SQLiteValue { s.map { .text($0) } ?? .null }
}
