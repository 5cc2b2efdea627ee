#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import StrictJSON
import Synchronization
import Testing
import TestSupport

/// Channel calls and channel campaigns wait for Apple's management host on the upstream
/// pool: with that host accepting connections and never answering, probes and another
/// tenant's ordinary campaign are answered at once, and calls past the pool's bound are
/// answered 503 `upstreamBusy` at once instead of queueing without end.
@Suite struct UpstreamIsolationTests {
    static let keyA = "tenant-a-secret-key-0001"
    static let keyB = "tenant-b-secret-key-0002"
    /// `printf %s KEY | sha256sum`
    static let hashA = "334212e5ccf93a15d15c438320cc94cf17bc12e7eb8a0c3144c1363dbcdd9e21"
    static let hashB = "4dae5370b949d6895f682d1e196f36ad1abe9086bf936668c93ae9eb9879c281"
    static let timeoutSeconds = 3

    static func config(_ fake: FakeAPNsServer, silentPort: Int) throws -> String {
        let root = TestPaths.packageRoot.path
        let text = """
        {"topic": "com.example.shop", "routes": "\(root)/config/routes.json", "templates": "\(root)/Templates",
         "apns": {"url": "https://127.0.0.1:\(fake.port)", "caFile": "\(fake.caFile)", "teamId": "\(FakeAPNsServer.teamId)",
                  "keyId": "\(FakeAPNsServer.keyId)", "keyFile": "\(FakeAPNsServer.keyFile)", "connections": 1,
                  "manageURL": "https://127.0.0.1:\(silentPort)", "requestTimeoutSeconds": \(timeoutSeconds)},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off", "threads": 2, "workers": 2, "upstreamWorkers": 2, "upstreamQueue": 2,
                    "apiKeys": [{"name": "tenant-a", "sha256": "\(hashA)"}, {"name": "tenant-b", "sha256": "\(hashB)"}]},
         "storage": {"path": "\(fake.directory.appendingPathComponent("isolation.db").path)"},
         "dispatcher": {"inFlight": 10}}
        """
        let path = fake.directory.appendingPathComponent("isolation.json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func bearer(_ key: String) -> [(String, String)] { [("Authorization", "Bearer \(key)")] }

    static func firstErrorCode(_ response: RawResponse) -> String? {
        (try? JSONParser().parse(response.body))?.objectValue?.string("code")
    }

    static func inFlight(_ server: ServeProcess) -> Int? {
        guard let metrics = server.request("GET", "/metrics") else { return nil }
        let line = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("pushgate_http_requests_in_flight ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Seconds `body` took, and what it returned.
    static func timed<T>(_ body: () -> T) -> (T, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let value = body()
        return (value, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    @Test func probesAndOtherTenantsNeverWaitOnApplesManagementHost() throws {
        // Accepts connections (the kernel's backlog) and never reads or answers.
        let silent = ServeCommandTests.boundSocket(listening: true)
        _ = listen(silent.fd, 64)
        defer { close(silent.fd) }
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let server = try ServeProcess(config: try Self.config(fake, silentPort: silent.port))
        defer { _ = server.terminate() }

        // Tenant A: two channel reads and two channel campaigns: as many as the upstream
        // pool runs (2) and queues (2). Before, these held both I/O threads and both workers.
        /// (call, status, problem code, body, seconds) of each of A's calls once answered.
        let answers = Mutex<[(call: String, status: Int?, code: String?, text: String, seconds: Double)]>([])
        let group = DispatchGroup()
        let channel = "c2NvcmVzLWxpdmUtbWF0Y2g="
        let calls: [(String, String, [UInt8]?)] = [
            ("GET", "/v1/channels", nil),
            ("POST", "/v1/campaigns", Array(#"{"channel": "\#(channel)", "live_activity": {"event": "update", "content_state": {"home": 2}}, "priority": 5}"#.utf8)),
            ("GET", "/v1/channels/\(channel.replacing("/", with: "_"))", nil),
            ("POST", "/v1/campaigns", Array(#"{"channel": "\#(channel)", "live_activity": {"event": "update", "content_state": {"home": 3}}, "priority": 5}"#.utf8)),
        ]
        let port = server.port
        for (method, path, body) in calls {
            group.enter()
            Thread.detachNewThread {
                let headers = Self.bearer(Self.keyA) + (body == nil ? [] : [("Content-Type", "application/json")])
                let (response, seconds) = Self.timed { RawHTTPClient.exchange(port: port, method: method, path: path, headers: headers, body: body ?? []) }
                let answer = (call: "\(method) \(path)", status: response?.status, code: response.flatMap(Self.firstErrorCode),
                              text: response.map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer", seconds: seconds)
                answers.withLock { $0.append(answer) }
                group.leave()
            }
        }
        // All four are in flight (the metrics request itself is one more); a moment more for
        // the campaigns' workers to plan their one-channel campaigns and hand off.
        #expect(eventuallyBlocking(timeout: .seconds(10), interval: .milliseconds(20)) { (Self.inFlight(server) ?? 0) >= 5 })
        Thread.sleep(forTimeInterval: 0.3)

        // One more channel call finds the pool and its queue full: refused at once.
        let (busy, busySeconds) = Self.timed { server.request("DELETE", "/v1/channels/\(channel)", headers: Self.bearer(Self.keyA)) }
        #expect(busy?.status == 503 && busy.flatMap(Self.firstErrorCode) == "upstreamBusy", "\(busy.map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer")")
        #expect(busy?.headers.contains { $0.0.lowercased() == "retry-after" } == true)
        #expect(busySeconds < 2, "the refusal took \(busySeconds) s")

        // Probes from another client, and tenant B's ordinary campaign, while A's calls wait.
        for probe in ["/healthz", "/readyz"] {
            let (response, seconds) = Self.timed { server.request("GET", probe) }
            #expect(response?.status == 200, "\(probe): \(response.map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer")")
            #expect(seconds < 2, "\(probe) took \(seconds) s while channel calls waited on Apple")
        }
        let device = TestTokens.device
        let (ordinary, ordinarySeconds) = Self.timed {
            server.request("POST", "/v1/campaigns", json: Array(#"{"alert": "Hi", "devices": ["\#(device)"]}"#.utf8), headers: Self.bearer(Self.keyB))
        }
        #expect(ordinary?.status == 202, "\(ordinary.map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer")")
        #expect(ordinarySeconds < 2, "tenant B's campaign took \(ordinarySeconds) s")
        // What the check above measured was in fact taken while A's calls still waited.
        #expect(answers.withLock { $0.isEmpty }, "a channel call ended before the probes: the test proved nothing")

        // Then A's calls end: the reads with no answer from Apple (503), the campaigns
        // accepted unchecked (the outbox does not depend on Apple's management host).
        #expect(group.wait(timeout: .now() + .seconds(4 * Self.timeoutSeconds + 10)) == .success)
        for (call, status, code, text, seconds) in answers.withLock({ $0 }) {
            if call.hasPrefix("GET") {
                #expect(status == 503 && code == "apnsUnavailable", "\(call): \(text)")
            } else {
                #expect(status == 202, "\(call): \(text)")
            }
            #expect(seconds >= Double(Self.timeoutSeconds) - 0.5, "\(call) answered after \(seconds) s: it did not wait on Apple")
        }
    }
}
