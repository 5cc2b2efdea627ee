#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import pushgate
import TestSupport
import Testing

/// `pushgate serve` under systemd's `Type=notify`: the readiness datagrams, received the way
/// systemd receives them (an AF_UNIX datagram socket named by NOTIFY_SOCKET).
@Suite struct ServiceNotifyTests {
    /// The listening end: a file-system socket in a temporary folder, or an abstract one
    /// (`@name`, as systemd's own is).
    final class NotifySocket {
        let fd: Int32
        let name: String
        private let folder: TempDir?

        init(abstract: Bool) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var path: [UInt8]
            if abstract {
                folder = nil
                name = "@pushgate-notify-test-\(UUID().uuidString)"
                path = Array(name.utf8)
                path[0] = 0
            } else {
                let dir = try TempDir()
                folder = dir
                name = dir.path("notify.sock")
                path = Array(name.utf8) + [0]
            }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
            // Generous: a loaded machine may take long to start the server, never this long.
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// The next datagram, nil after the timeout (`waiting` false: nil when none is queued).
        func receive(waiting: Bool = true) -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, waiting ? 0 : Int32(MSG_DONTWAIT)) }
            return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
        }
    }

    @Test(arguments: [false, true])
    func serveSaysReadyOnceItAnswersAndStoppingAtTheSignal(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let dir = try TempDir()
        let config = try ServeProcess.dryRunConfig("notify", in: dir.url, templates: "\(TestPaths.packageRoot.path)/Templates", keys: "[]")
        let server = try ServeProcess(config: config, environment: ["NOTIFY_SOCKET": socket.name])
        let ready = try #require(socket.receive(), "no READY=1 within 60 s: \(server.stderrText)")
        #expect(ready == "READY=1\nSTATUS=listening on 127.0.0.1:\(server.port)")
        // Ready: the API answers, and the storage took its first write.
        #expect(server.request("GET", "/readyz")?.status == 200)
        #expect(server.terminate() == 0)
        #expect(socket.receive() == "STOPPING=1\nSTATUS=stopping: finishing requests and sends in flight")
        #expect(!server.stderrText.contains("notify"), "no complaint about the socket: \(server.stderrText)")
    }

    /// A database that refuses the first heartbeat (a trigger aborts every write to it): the
    /// start fails with the reason, exit 2, and systemd never hears READY=1.
    @Test func aStorageThatTakesNoWriteFailsTheStartWithoutReady() throws {
        let socket = try NotifySocket(abstract: true)
        let dir = try TempDir()
        let config = try ServeProcess.dryRunConfig("nowrite", in: dir.url, templates: "\(TestPaths.packageRoot.path)/Templates", keys: "[]")
        let migrate = try CLI.run(["storage", "migrate", "--config", config])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let refuse = "SELECT RAISE(ABORT, 'refused by the test')"
        let script = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.close()"
        let sql = "CREATE TRIGGER no_insert BEFORE INSERT ON heartbeat BEGIN \(refuse); END; "
            + "CREATE TRIGGER no_update BEFORE UPDATE ON heartbeat BEGIN \(refuse); END;"
        let triggers = try CLI.run(["-c", script, dir.path("nowrite.db"), sql], program: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(triggers.status == 0, "\(triggers.stderr)")
        // Under timeout(1): a server that starts anyway is stopped (status 124), not waited for.
        let serve = try CLI.run(["serve", "--config", config],
                                environment: ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": socket.name]) { $1 },
                                wrapper: ["/usr/bin/timeout", "60"])
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("pushgate serve: storage \(dir.path("nowrite.db")): storage not writable: "), "\(serve.stderr)")
        #expect(serve.stderr.contains("refused by the test"), "\(serve.stderr)")
        #expect(!serve.stderr.contains("listening on"))
        #expect(socket.receive(waiting: false) == nil, "no READY=1 for a server that did not start")
    }

    @Test func withoutTheVariableNothingIsSent() {
        #expect(ServiceNotifier(environment: [:]).notify("READY=1") == nil)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": ""]).notify("READY=1") == nil)
    }

    @Test func aSocketThatCannotBeReachedIsAPreciseProblem() throws {
        let dir = try TempDir()
        let missing = dir.path("nobody.sock")
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": missing]).notify("READY=1")
                == "cannot notify systemd at NOTIFY_SOCKET \"\(missing)\": No such file or directory")
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": "run/notify"]).notify("READY=1")
                == "NOTIFY_SOCKET \"run/notify\" is neither an absolute path nor an abstract socket name (@…)")
        let long = "/" + String(repeating: "x", count: 107)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": long]).notify("READY=1")
                == "NOTIFY_SOCKET \"\(long)\" is longer than a socket address (107 bytes)")
    }

    /// A datagram to a path socket and to an abstract one arrives as sent.
    @Test(arguments: [false, true])
    func theDatagramArrivesWhole(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": socket.name]).notify("STATUS=one\nREADY=1") == nil)
        #expect(socket.receive() == "STATUS=one\nREADY=1")
    }
}
