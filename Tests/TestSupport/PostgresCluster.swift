import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, a server on a
/// free loopback port, run as the `postgres` user (PostgreSQL refuses to run as root).
/// A small supervisor script owns the server: when the test process exits (or dies), it
/// stops the server and removes the folder. One cluster per test process; each test takes
/// its own database (`newDatabaseURL`).
public final class PostgresCluster: Sendable {
    public let port: Int
    public let folder: String
    /// The server's binaries (`initdb`, `postgres`, `pg_ctl`).
    public let binaries: String

    /// The cluster of this test process, started on first use.
    public static func shared() throws -> PostgresCluster {
        try started.get()
    }

    private static let started: Result<PostgresCluster, ClusterError> = Result { () throws(ClusterError) in try PostgresCluster() }

    public struct ClusterError: Error, CustomStringConvertible {
        public var description: String
    }

    private init() throws(ClusterError) {
        guard let binaries = Self.findBinaries() else {
            throw ClusterError(description: "PostgreSQL server binaries not found under /usr/lib/postgresql (make deps installs postgresql-15)")
        }
        self.binaries = binaries
        var template = Array("/tmp/pushgate-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError(description: "mkdtemp failed: \(String(cString: strerror(errno)))") }
        folder = String(cString: made)
        port = Self.freeLoopbackPort()
        // As root the server runs as `postgres`; as anyone else, as that user.
        let asPostgres: String
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw ClusterError(description: "no postgres user (PostgreSQL refuses to run as root; the postgresql-15 package creates it)")
            }
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
            asPostgres = "setpriv --reuid=postgres --regid=postgres --init-groups --"
        } else {
            asPostgres = ""
        }
        let q = { (s: String) in "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // Durability settings off: a test cluster is thrown away, and fsyncs would only slow the suite.
        let script = """
            set -u
            cd \(q(folder))
            \(asPostgres) \(q(binaries + "/initdb")) -D \(q(folder + "/data")) -A trust -U postgres -E UTF8 --locale=C --no-sync > \(q(folder + "/initdb.log")) 2>&1 || { echo failed > \(q(folder + "/status")); exit 1; }
            \(asPostgres) \(q(binaries + "/postgres")) -D \(q(folder + "/data")) -p \(port) -c listen_addresses=127.0.0.1 \
                -c unix_socket_directories=\(q(folder)) -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=300 -c shared_buffers=32MB -c log_min_messages=warning > \(q(folder + "/server.log")) 2>&1 &
            server=$!
            for i in $(seq 1 300); do
                pg_isready -q -h 127.0.0.1 -p \(port) && break
                kill -0 $server 2>/dev/null || break
                sleep 0.1
            done
            if pg_isready -q -h 127.0.0.1 -p \(port); then echo ready > \(q(folder + "/status")); else echo failed > \(q(folder + "/status")); fi
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 0.5; done
            kill -INT $server 2>/dev/null
            wait $server
            rm -rf \(q(folder))
            """
        let supervisor = Process()
        supervisor.executableURL = URL(fileURLWithPath: "/bin/bash")
        supervisor.arguments = ["-c", script]
        supervisor.standardInput = FileHandle.nullDevice
        supervisor.standardOutput = FileHandle.nullDevice
        supervisor.standardError = FileHandle.nullDevice
        do { try supervisor.run() } catch { throw ClusterError(description: "cannot start the cluster supervisor: \(error)") }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8) {
                if status.hasPrefix("ready") { return }
                let log = (try? String(contentsOfFile: folder + "/initdb.log", encoding: .utf8)) ?? ""
                let server = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
                throw ClusterError(description: "the test cluster did not start:\n\(log)\n\(server)")
            }
            usleep(50_000)
        }
        throw ClusterError(description: "the test cluster did not start within 60 s (folder \(folder))")
    }

    /// `postgresql://postgres@127.0.0.1:PORT/NAME` of a new, empty database.
    public func newDatabaseURL() throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try psql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    public func url(database: String) -> String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }

    /// Runs SQL through `psql` as the superuser on database `postgres`; returns its output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres",
                             "-d", database, "-c", sql]
        let output = Pipe.closedOnExec()
        let errors = Pipe.closedOnExec()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let failure = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ClusterError(description: "psql \(sql): \(String(decoding: failure, as: UTF8.self))")
        }
        return String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// A port the kernel just gave out on 127.0.0.1 (bound, read, closed).
    static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
