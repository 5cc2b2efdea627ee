#if canImport(Glibc)
import Glibc
#endif
internal import CLibPQ
import Storage

/// A value sent as a statement parameter. Everything goes as text except bytes (binary),
/// so no value is ever spliced into SQL.
enum PGValue {
    case null
    case text(String)
    case int(Int64)
    case double(Double)
    case bytes([UInt8])

    static func integer(_ value: Int) -> PGValue { .int(Int64(value)) }
    static func optional(_ value: String?) -> PGValue { value.map { .text($0) } ?? .null }
    static func optional(_ value: Int64?) -> PGValue { value.map { .int($0) } ?? .null }
    static func optional(_ value: Double?) -> PGValue { value.map { .double($0) } ?? .null }
}

/// What the server enforces on every pushgate session, so that an instance that stops
/// answering (SIGSTOP, a paused VM, a partition) cannot hold locks for long: PostgreSQL
/// ends a statement running longer than `statementTimeout`, gives up a lock wait after
/// `lockTimeout`, and closes a session left inside a transaction for `idleInTransaction`
/// (its locks go with it; its transaction rolls back). TCP keepalives and
/// `tcp_user_timeout` find a peer that vanished without a FIN. All in milliseconds.
/// Sized from the dispatcher's lease (`forLease`): a frozen claim is gone well before the
/// leases it was taking would expire.
public struct PGSessionLimits: Sendable, Equatable {
    public var statementTimeoutMilliseconds: Int
    public var lockTimeoutMilliseconds: Int
    public var idleInTransactionMilliseconds: Int
    public var keepalivesIdleSeconds: Int
    public var keepalivesIntervalSeconds: Int
    public var keepalivesCount: Int
    public var tcpUserTimeoutMilliseconds: Int

    /// For `dispatcher.leaseSeconds` = L: statements L/3, lock waits and idle transactions
    /// L/6 (at least 1 s each), keepalives after L/6 idle every L/15 three times, TCP user
    /// timeout L/3. The default lease (30 s): 10 s, 5 s, 5 s, 5 s + 3 × 2 s, 10 s.
    public static func forLease(seconds lease: Double) -> PGSessionLimits {
        func ms(_ fraction: Double) -> Int { max(1000, Int(lease * 1000 * fraction)) }
        func s(_ fraction: Double) -> Int { max(1, Int(lease * fraction)) }
        return PGSessionLimits(statementTimeoutMilliseconds: ms(1.0 / 3), lockTimeoutMilliseconds: ms(1.0 / 6),
                               idleInTransactionMilliseconds: ms(1.0 / 6), keepalivesIdleSeconds: s(1.0 / 6),
                               keepalivesIntervalSeconds: s(1.0 / 15), keepalivesCount: 3,
                               tcpUserTimeoutMilliseconds: ms(1.0 / 3))
    }

    /// For the default lease of 30 s.
    public static let standard = forLease(seconds: 30)

    /// libpq connection keywords: the keepalives, and the timeouts as `-c` options.
    var connectionParameters: [(String, String)] {
        [("keepalives", "1"), ("keepalives_idle", String(keepalivesIdleSeconds)),
         ("keepalives_interval", String(keepalivesIntervalSeconds)), ("keepalives_count", String(keepalivesCount)),
         ("tcp_user_timeout", String(tcpUserTimeoutMilliseconds)),
         ("options", "-c statement_timeout=\(statementTimeoutMilliseconds) -c lock_timeout=\(lockTimeoutMilliseconds)"
            + " -c idle_in_transaction_session_timeout=\(idleInTransactionMilliseconds)")]
    }
}

/// One libpq connection (`PGconn`), closed when the object goes. Used by one thread at a
/// time: the pool hands it out and takes it back.
final class PGConnection {
    private let handle: OpaquePointer
    /// Its row in `campaign_counts` (see `countShard`), once numbered.
    var shard: Int?
    /// Statements sent on this connection (what a claim or a record costs, for tests and
    /// measurements).
    private(set) var statementCount = 0

    /// Connects to `url` (a `postgresql://` URL or a `key=value` string). `password`, when
    /// given, overrides the URL's; libpq's own PGPASSWORD and password file still apply.
    /// `limits`: the server-side timeouts and TCP keepalives every session gets.
    init(url: String, password: String?, connectTimeoutSeconds: Int, limits: PGSessionLimits = .standard) throws(StorageError) {
        // Ours first: whatever the URL says overrides them (expand_dbname), the password last.
        var keywords = ["connect_timeout", "application_name"]
        var values = [String(connectTimeoutSeconds), "pushgate"]
        for (keyword, value) in limits.connectionParameters {
            keywords.append(keyword)
            values.append(value)
        }
        keywords.append("dbname")
        values.append(url)
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let connection = Self.withCStrings(keywords) { keys in
            Self.withCStrings(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection else { throw StorageError(.unavailable, "PostgreSQL: out of memory creating a connection") }
        handle = connection
        guard PQstatus(handle) == CONNECTION_OK else {
            throw StorageError(.unavailable, "cannot connect to PostgreSQL: \(errorMessage)")
        }
        // Notices ("already exists, skipping") are not pushgate's output.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE }

    var serverVersion: Int { Int(PQserverVersion(handle)) }

    private var errorMessage: String {
        guard let text = PQerrorMessage(handle) else { return "unknown error" }
        return Self.trimmed(String(cString: text))
    }

    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == " " { text = text.dropLast() }
        return String(text)
    }

    /// Runs one statement with its parameters; throws unless it succeeded.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PGValue] = []) throws(StorageError) -> PGResult {
        statementCount += 1
        var texts: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            switch parameter {
            case .null: texts.append(nil); lengths.append(0); formats.append(0)
            case .text(let value): texts.append(Array(value.utf8CString)); lengths.append(0); formats.append(0)
            case .int(let value): texts.append(Array(String(value).utf8CString)); lengths.append(0); formats.append(0)
            case .double(let value): texts.append(Array(Self.text(value).utf8CString)); lengths.append(0); formats.append(0)
            case .bytes(let value):
                texts.append(value.map { CChar(bitPattern: $0) } + [0])
                lengths.append(Int32(value.count))
                formats.append(1)
            }
        }
        let name = try preparedName(sql)
        let raw = Self.withOptionalBuffers(texts) { pointers in
            if let name { return PQexecPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 0) }
            return PQexecParams(handle, sql, Int32(parameters.count), nil, pointers, lengths, formats, 0)
        }
        return try check(raw, sql)
    }

    /// Statements prepared on this connection, by text: a claim's and a record's statements
    /// are parsed (and, once PostgreSQL settles on a generic plan, planned) once per
    /// connection instead of on every call. Every value is a parameter, so the texts are
    /// few (a few dozen).
    private var prepared: [String: String] = [:]

    /// The prepared statement's name for `sql`, preparing it on first use; nil for what
    /// is run as it comes (transaction control, settings).
    private func preparedName(_ sql: String) throws(StorageError) -> String? {
        if let name = prepared[sql] { return name }
        let head = sql.utf8.prefix { $0 != 32 && $0 != 10 && $0 != 40 }
        guard ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(where: { $0.utf8.elementsEqual(head) }),
              prepared.count < 256 else { return nil }
        let name = "pushgate_\(prepared.count)"
        try check(PQprepare(handle, name, sql, 0, nil), sql)
        prepared[sql] = name
        return name
    }

    /// Several statements separated by semicolons, no parameters (migrations).
    func executeScript(_ sql: String) throws(StorageError) {
        try check(PQexec(handle, sql), sql)
    }

    private func connectionError(_ sql: String) -> StorageError {
        StorageError(.unavailable, "PostgreSQL connection lost: \(errorMessage)")
    }

    @discardableResult
    private func check(_ raw: OpaquePointer?, _ sql: String, expectCopy: Bool = false) throws(StorageError) -> PGResult {
        guard let raw else { throw connectionError(sql) }
        let result = PGResult(raw)
        let status = PQresultStatus(raw)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || (expectCopy && status == PGRES_COPY_IN) { return result }
        throw error(of: result, sql)
    }

    private func error(of result: PGResult, _ sql: String) -> StorageError {
        let state = result.errorField(Int32(UInt8(ascii: "C"))) ?? ""
        let message = result.errorField(Int32(UInt8(ascii: "M"))) ?? errorMessage
        if PQstatus(handle) != CONNECTION_OK || state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03" {
            return StorageError(.unavailable, "PostgreSQL connection lost: \(message)" + (state.isEmpty ? "" : " (SQLSTATE \(state))"))
        }
        let code: StorageError.Code
        switch state {
        case "40001", "40P01": code = .busy
        case "55P03": code = .busy          // lock_timeout: another session held the row too long
        case "53100": code = .notWritable   // disk full
        case "25006": code = .notWritable   // read-only transaction (a standby)
        default: code = .stepFailed
        }
        let first = sql.split(separator: "\n").first.map { $0.trimmingPrefixSpaces } ?? ""
        return StorageError(code, "\(message) (SQLSTATE \(state)) in \(first)")
    }

    /// Swift's shortest round-trip spelling; PostgreSQL reads "inf" and "nan" too.
    static func text(_ value: Double) -> String { value.description }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }

    private static func withOptionalBuffers<R>(_ buffers: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = buffers.map { buffer in
            guard let buffer else { return nil }
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: buffer.count)
            copy.initialize(from: buffer, count: buffer.count)
            return copy
        }
        defer { copies.forEach { $0?.deallocate() } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}

private extension Substring {
    var trimmingPrefixSpaces: Substring { drop { $0 == " " } }
}

/// One statement's result (`PGresult`), cleared when the object goes. Values come as text.
final class PGResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rows: Int { Int(PQntuples(handle)) }
    /// Rows an INSERT, UPDATE or DELETE changed.
    var changed: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func errorField(_ field: Int32) -> String? {
        PQresultErrorField(handle, field).map { PGConnection.trimmed(String(cString: $0)) }
    }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    func text(_ row: Int, _ column: Int) -> String { String(cString: PQgetvalue(handle, Int32(row), Int32(column))) }
    func optionalText(_ row: Int, _ column: Int) -> String? { isNull(row, column) ? nil : text(row, column) }

    func int(_ row: Int, _ column: Int) -> Int64 { optionalInt(row, column) ?? 0 }
    func optionalInt(_ row: Int, _ column: Int) -> Int64? {
        isNull(row, column) ? nil : Int64(text(row, column))
    }

    func double(_ row: Int, _ column: Int) -> Double { optionalDouble(row, column) ?? 0 }
    func optionalDouble(_ row: Int, _ column: Int) -> Double? {
        guard !isNull(row, column) else { return nil }
        let value = text(row, column)
        switch value {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default: return Double(value)
        }
    }

    func bool(_ row: Int, _ column: Int) -> Bool { text(row, column) == "t" }

    /// A `bytea` column in text form (`\x` then hex).
    func bytes(_ row: Int, _ column: Int) -> [UInt8] { optionalBytes(row, column) ?? [] }
    func optionalBytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard let start = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return start.withMemoryRebound(to: UInt8.self, capacity: length) { text in
            guard length >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return [] }
            var out: [UInt8] = []
            out.reserveCapacity((length - 2) / 2)
            var i = 2
            while i + 1 < length {
                out.append(Self.nibble(text[i]) << 4 | Self.nibble(text[i + 1]))
                i += 2
            }
            return out
        }
    }

    private static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}
