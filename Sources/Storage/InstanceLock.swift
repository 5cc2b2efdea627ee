#if canImport(Glibc)
import Glibc
#endif
import StrictJSON

/// Who a running gateway process is: what a lock and (later) a lease names as its owner.
public struct InstanceID: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var pid: Int32
    /// Seconds since 1970.
    public var startedAt: Double

    public init(host: String, pid: Int32, startedAt: Double) {
        self.host = host
        self.pid = pid
        self.startedAt = startedAt
    }

    /// This process, stamped now.
    public static func current(now: Double) -> InstanceID {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown-host"
        return InstanceID(host: host, pid: getpid(), startedAt: now)
    }

    /// `pid=…\nhost=…\nsince=…` as the lock file holds it.
    var fileText: String { "pid=\(pid)\nhost=\(host)\nsince=\(startedAt)\n" }

    init?(fileText: [UInt8]) {
        var fields: [String: String] = [:]
        for line in LineSplitter.lines(of: fileText) {
            guard let eq = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        guard let pid = fields["pid"].flatMap({ Int32($0) }), let host = fields["host"],
              let since = fields["since"].flatMap({ Double($0) }) else { return nil }
        self.init(host: host, pid: pid, startedAt: since)
    }

    public var description: String { "pid \(pid) on \(host) since \(RFC3339.format(startedAt))" }
}

/// SQLite is one process's store: the process that runs the outbox holds an exclusive
/// `flock` on `<database>.lock` for as long as it has the database open, and writes who it
/// is into the file. The kernel drops the lock when the process dies, `kill -9` included,
/// so a crash never leaves a stale lock behind. (A separate file, not the database: SQLite
/// keeps POSIX locks on the database, which closing any other descriptor on it would drop.)
final class InstanceLock: Sendable {
    let path: String
    private let fd: Int32

    /// Takes the lock or says who holds it (`inUse`).
    init(databasePath: String, owner: InstanceID) throws(StorageError) {
        path = databasePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError(.openFailed, "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.read(fd)
            close(fd)
            let who = holder.map { $0.description } ?? "another process"
            throw StorageError(.inUse, "storage in use by \(who)")
        }
        self.fd = fd
        let text = Array(owner.fileText.utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit {
        _ = ftruncate(fd, 0)
        close(fd)  // releases the flock
    }

    /// Who holds the lock, as the file says (read without taking it).
    static func holder(databasePath: String) -> InstanceID? {
        let fd = open(databasePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0 else {
            flock(fd, LOCK_UN)
            return nil  // nobody holds it
        }
        return read(fd)
    }

    private static func read(_ fd: Int32) -> InstanceID? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return InstanceID(fileText: Array(buffer.prefix(n)))
    }
}
