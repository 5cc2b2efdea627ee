#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import Storage
import StrictJSON
import Synchronization
import Timing

/// The gateway's log: one line per request, and the start-up and shutdown messages, in
/// one format (`server.logFormat`: `json`, one object per line, or `text`) and above one
/// level (`server.logLevel`). Request lines are collected in memory and written in
/// blocks by `flush()` (the service flushes on a timer and at shutdown), so logging costs
/// a lock and a copy on the request path, not a system call. Messages are written at once.
public final class RequestLog: Sendable {
    public enum Format: String, Sendable, CaseIterable { case json, text }

    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error

        var rank: Int { Level.allCases.firstIndex(of: self)! }
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }

        /// A request's level: server errors are errors, refusals warnings.
        static func of(status: Int) -> Level { status >= 500 || status == 0 ? .error : status >= 400 ? .warn : .info }
    }

    public struct Entry: Sendable {
        public var time: Double
        public var requestID: String
        /// The client's own `X-Request-Id` when it was not usable (too long or unsafe), cut.
        public var clientRequestID: String?
        public var keyName: String?
        /// The app the request was for, when it was for one.
        public var app: String?
        public var method: String
        public var path: String
        /// Name and value pairs as decoded; credentials are redacted when written.
        public var query: [(name: String, value: String)]
        public var userAgent: String?
        public var status: Int
        public var responseBytes: Int
        public var durationMicroseconds: Int
        /// The client: the TCP peer, or the address a trusted proxy forwarded for (`client`).
        public var remoteAddress: String
        /// The TCP peer when it is not the client (a trusted proxy): `peer`.
        public var peer: String?

        public init(time: Double, requestID: String, clientRequestID: String? = nil, keyName: String?, method: String,
                    path: String, query: [(name: String, value: String)] = [], userAgent: String? = nil, status: Int,
                    responseBytes: Int = 0, durationMicroseconds: Int, remoteAddress: String, app: String? = nil,
                    peer: String? = nil) {
            self.time = time
            self.requestID = requestID
            self.clientRequestID = clientRequestID
            self.keyName = keyName
            self.app = app
            self.method = method
            self.path = path
            self.query = query
            self.userAgent = userAgent
            self.status = status
            self.responseBytes = responseBytes
            self.durationMicroseconds = durationMicroseconds
            self.remoteAddress = remoteAddress
            self.peer = peer
        }
    }

    public let format: Format
    public let level: Level
    private let pending = Mutex<[UInt8]>([])
    private let fd: Int32
    private let clock: any TimeSource
    private let messageFD: Int32

    /// `fd` receives request lines (2 is stderr; a negative fd keeps none); messages
    /// always go to `messageFD`. Tests pass pipes. `clock` stamps the messages.
    public init(fd: Int32 = 2, messageFD: Int32 = 2, format: Format = .json, level: Level = .info, clock: any TimeSource) {
        self.clock = clock
        self.fd = fd
        self.messageFD = messageFD
        self.format = format
        self.level = level
    }

    public func record(_ entry: Entry) {
        let entryLevel = Level.of(status: entry.status)
        guard fd >= 0, entryLevel >= level else { return }
        let line = format == .json ? jsonLine(entry, level: entryLevel) : textLine(entry, level: entryLevel)
        let full = pending.withLock { buffer -> Bool in
            buffer.append(contentsOf: line)
            return buffer.count >= 1 << 16
        }
        if full { flush() }
    }

    /// A start-up, shutdown or failure message, in the log's format, written at once
    /// (after any request lines still buffered).
    public func message(_ level: Level, _ text: String, time: Double? = nil) {
        guard level >= self.level else { return }
        let time = time ?? clock.wallSeconds()
        var line: [UInt8]
        if format == .json {
            var w = JSONWriter(capacity: 64 + text.utf8.count)
            w.object { w in
                w.member("time", rfc3339(time))
                w.member("level", level.rawValue)
                w.member("message", text)
            }
            w.raw("\n")
            line = w.bytes
        } else {
            line = Array("\(rfc3339(time)) \(level.rawValue) \(TextSafety.clipped(text, maxBytes: 4096))\n".utf8)
        }
        flush()
        write(line, to: messageFD)
    }

    public func flush() {
        let bytes = pending.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        guard !bytes.isEmpty else { return }
        write(bytes, to: fd)
    }

    private func write(_ bytes: [UInt8], to fd: Int32) {
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    private func jsonLine(_ entry: Entry, level: Level) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.object { w in
            w.member("time", rfc3339(entry.time))
            w.member("level", level.rawValue)
            w.member("request_id", entry.requestID)
            if let client = entry.clientRequestID { w.member("client_request_id", client) }
            w.member("key", orNull: entry.keyName)
            w.member("app", orNull: entry.app)
            w.member("method", TextSafety.clipped(entry.method, maxBytes: 64))
            // Escaped visibly, as `client_request_id` is: JSON's own escapes would decode
            // back to the raw ESC, CR/LF or bidi control (`jq -r .path`).
            w.member("path", TextSafety.clipped(TextSafety.escapedForDisplay(RequestLog.redactedPath(entry.path)), maxBytes: 2048))
            w.member("query", TextSafety.clipped(TextSafety.escapedForDisplay(RequestLog.redactedQuery(entry.query)), maxBytes: 1024))
            w.member("status", entry.status)
            w.member("bytes", entry.responseBytes)
            w.member("duration_us", entry.durationMicroseconds)
            w.member("client", TextSafety.clipped(entry.remoteAddress, maxBytes: 256))
            if let peer = entry.peer { w.member("peer", peer) }
            w.member("user_agent", orNull: entry.userAgent.map { TextSafety.clipped(TextSafety.escapedForDisplay($0), maxBytes: 256) })
        }
        w.raw("\n")
        return w.bytes
    }

    private func textLine(_ entry: Entry, level: Level) -> [UInt8] {
        func field(_ name: String, _ value: String) -> String {
            let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }
            return " \(name)=" + (plain ? value : TextSafety.quoted(value))
        }
        var line = "\(rfc3339(entry.time)) \(level.rawValue) request"
        line += field("id", entry.requestID)
        if let client = entry.clientRequestID { line += field("client_id", client) }
        line += field("key", entry.keyName ?? "-")
        if let app = entry.app { line += field("app", app) }
        line += field("method", TextSafety.clipped(entry.method, maxBytes: 64))
        line += field("path", TextSafety.clipped(RequestLog.redactedPath(entry.path), maxBytes: 2048))
        let query = RequestLog.redactedQuery(entry.query)
        if !query.isEmpty { line += field("query", query) }
        line += field("status", String(entry.status))
        line += field("bytes", String(entry.responseBytes))
        line += field("duration_us", String(entry.durationMicroseconds))
        line += field("client", TextSafety.clipped(entry.remoteAddress, maxBytes: 256))
        if let peer = entry.peer { line += field("peer", peer) }
        if let agent = entry.userAgent { line += field("user_agent", TextSafety.clipped(agent, maxBytes: 256)) }
        return Array((line + "\n").utf8)
    }

    /// Device tokens in paths (`/v1/tokens/<hex>/register`) shortened to 8 hex digits.
    static func redactedPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            let isToken = segment.utf8.count > 16 && segment.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46)
            }
            return isToken ? String(segment.prefix(8)) + "…" : String(segment)
        }.joined(separator: "/")
    }

    /// `name=value&…` as decoded, each value of a credential-like name (`token`,
    /// `api_key`, `password`, …, as deep links refuse them) written as `REDACTED`, at
    /// most 1 KiB.
    static func redactedQuery(_ query: [(name: String, value: String)]) -> String {
        let text = query.map { item in
            item.name + "=" + (CredentialKeys.contains(item.name) ? "REDACTED" : item.value)
        }.joined(separator: "&")
        return TextSafety.clipped(text, maxBytes: 1024)
    }
}

/// `2026-11-29T16:50:38.123Z`
func rfc3339(_ seconds: Double) -> String { RFC3339.format(seconds) }
