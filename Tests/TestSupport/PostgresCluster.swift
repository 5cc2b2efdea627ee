import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, a server on a
/// free loopback port, run as the `postgres` user (PostgreSQL refuses to run as root).
/// A small supervisor script stops the server and removes the folder when the test
/// process exits (or dies). Most tests share one cluster per test process (`shared`) and
/// take a database of their own in it (`newDatabaseURL`); a test that stops and restarts
/// the server makes its own (`make`) and removes it after.
public final class PostgresCluster: Sendable {
    public let port: Int
    public let folder: String
    /// The server's binaries (`initdb`, `pg_ctl`).
    public let binaries: String

    /// The cluster of this test process, started on first use.
    public static func shared() throws -> PostgresCluster {
        try started.get()
    }

    /// A cluster of the caller's own, to stop and start; `remove()` it at the end.
    public static func make() throws -> PostgresCluster {
        do { return try PostgresCluster() } catch { throw error }
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
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw ClusterError(description: "no postgres user (PostgreSQL refuses to run as root; the postgresql-15 package creates it)")
            }
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let q = Self.quoted
        let asPostgres = Self.asPostgres.map(q).joined(separator: " ")
        let script = """
            set -u
            cd \(q(folder))
            \(asPostgres) \(q(binaries + "/initdb")) -D \(q(folder + "/data")) -A trust -U postgres -E UTF8 --locale=C --no-sync > \(q(folder + "/initdb.log")) 2>&1 || { echo failed > \(q(folder + "/status")); exit 1; }
            if \(pgCtl(["start", "-w", "-t", "60"]).map(q).joined(separator: " ")) > /dev/null 2>&1; then echo ready > \(q(folder + "/status")); else echo failed > \(q(folder + "/status")); fi
            while kill -0 \(getpid()) 2>/dev/null && [ -d \(q(folder + "/data")) ]; do sleep 0.5; done
            \(pgCtl(["stop", "-m", "immediate"]).map(q).joined(separator: " ")) > /dev/null 2>&1
            rm -rf \(q(folder))
            """
        let supervisor = Process()
        supervisor.executableURL = URL(fileURLWithPath: "/bin/bash")
        supervisor.arguments = ["-c", script]
        supervisor.standardInput = FileHandle.nullDevice
        supervisor.standardOutput = FileHandle.nullDevice
        supervisor.standardError = FileHandle.nullDevice
        do { try supervisor.run() } catch { throw ClusterError(description: "cannot start the cluster supervisor: \(error)") }
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            if let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8) {
                if status.hasPrefix("ready") { return }
                let log = (try? String(contentsOfFile: folder + "/initdb.log", encoding: .utf8)) ?? ""
                let server = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
                throw ClusterError(description: "the test cluster did not start:\n\(log)\n\(server)")
            }
            usleep(50_000)
        }
        throw ClusterError(description: "the test cluster did not start within 90 s (folder \(folder))")
    }

    /// Runs `pg_ctl` as the postgres user (as root) or as oneself.
    private static let asPostgres: [String] = getuid() == 0 ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] : []

    private static func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// `pg_ctl` with the cluster's folder and, for start, its settings: loopback only, no
    /// fsync (a test cluster is thrown away, and the machine does not crash under it), but
    /// `synchronous_commit` on as in production: a commit is written before it is
    /// acknowledged, so a server killed at once (`stop`) loses no acknowledged commit.
    private func pgCtl(_ action: [String]) -> [String] {
        var arguments = Self.asPostgres + [binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log"] + action
        if action.first == "start" {
            arguments += ["-o", "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(folder) -c fsync=off "
                          + "-c full_page_writes=off -c max_connections=300 -c shared_buffers=32MB"]
        }
        return arguments
    }

    /// Runs a command and waits for it with `posix_spawn` and `waitpid` (not `Process`:
    /// `pg_ctl start` leaves a daemon behind, and the command must not hand it any of
    /// this process's descriptors, such as another test's pipes: a shell closes them first).
    private func run(_ arguments: [String]) throws {
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@""#
        let argv = ["/bin/bash", "-c", closeInherited, "bash"] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw ClusterError(description: "cannot run \(arguments.joined(separator: " ")): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw ClusterError(description: "\(arguments.joined(separator: " ")) exited with status \(status)") }
    }

    /// Stops the server at once (clients see their connections drop), as a crash would.
    public func stop() throws { try run(pgCtl(["stop", "-m", "immediate", "-w"])) }

    /// Starts it again on the same port, waiting until it accepts connections.
    public func start() throws { try run(pgCtl(["start", "-w", "-t", "60"])) }

    /// Stops the server and removes the folder (for a cluster from `make`).
    public func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: folder)
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
