#if canImport(Glibc)
import Glibc
#endif
import Storage
import StrictJSON
import Synchronization

/// One JSON line per request. Lines are collected in memory and written in blocks by
/// `flush()` (the service flushes on a timer and at shutdown), so logging costs a
/// lock and a copy on the request path, not a system call.
public final class RequestLog: Sendable {
    public struct Entry: Sendable {
        public var time: Double
        public var requestID: String
        public var keyName: String?
        public var method: String
        public var path: String
        public var status: Int
        public var durationMicroseconds: Int
        public var remoteAddress: String
    }

    private let pending = Mutex<[UInt8]>([])
    private let fd: Int32

    /// `fd` 2 is stderr; tests pass a pipe. A negative fd keeps nothing.
    public init(fd: Int32 = 2) {
        self.fd = fd
    }

    public func record(_ entry: Entry) {
        guard fd >= 0 else { return }
        var w = JSONWriter(capacity: 200)
        w.raw("{\"time\":")
        w.string(rfc3339(entry.time))
        w.raw(",\"request_id\":")
        w.string(entry.requestID)
        w.raw(",\"key\":")
        if let key = entry.keyName { w.string(key) } else { w.null() }
        w.raw(",\"method\":")
        w.string(entry.method)
        w.raw(",\"path\":")
        w.string(RequestLog.redactedPath(entry.path))
        w.raw(",\"status\":")
        w.int(entry.status)
        w.raw(",\"duration_us\":")
        w.int(entry.durationMicroseconds)
        w.raw(",\"remote\":")
        w.string(entry.remoteAddress)
        w.raw("}\n")
        let line = w.bytes
        let full = pending.withLock { buffer -> Bool in
            buffer.append(contentsOf: line)
            return buffer.count >= 1 << 16
        }
        if full { flush() }
    }

    public func flush() {
        let bytes = pending.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
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
}

/// `2026-11-29T16:50:38.123Z`
func rfc3339(_ seconds: Double) -> String { RFC3339.format(seconds) }
