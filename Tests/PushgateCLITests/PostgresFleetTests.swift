import Foundation
import StrictJSON
import Testing
import TestSupport

/// `pushgate serve` on PostgreSQL: one instance, a fleet of three sharing one campaign
/// through two kill -9s, lifecycle changes through one instance reaching the others, and a
/// database restarted mid-campaign. The fake APNs's own log is the judge of what was sent.
@Suite(.serialized) struct PostgresFleetTests {
    static let inFlight = 40

    static func token(_ campaign: Int, _ n: Int) -> String {
        let hex = String(campaign * 1_000_000 + n, radix: 16)
        return String(repeating: "d", count: 64 - hex.count) + hex
    }

    /// A campaign as `application/x-ndjson`: the campaign on the first line (confirming its
    /// device count for the guard), a token a line.
    static func lines(_ tokens: [String]) -> [UInt8] {
        var text = #"{"alert":{"title":"Sale","body":"Today only"},"deeplink":"https://example.com/product/42","confirm_devices":"#
            + "\(tokens.count)}\n"
        text.reserveCapacity(tokens.count * 65 + 100)
        for token in tokens { text += token + "\n" }
        return Array(text.utf8)
    }

    /// POSTs the campaign, waiting up to two minutes for the 202 (a debug build plans
    /// 100,000 devices in well over the client's usual 10 s).
    static func post(_ server: ServeProcess, _ tokens: [String]) throws -> String {
        let body = lines(tokens)
        let client = try #require(RawHTTPClient(port: server.port))
        let head = "POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + "Content-Type: application/x-ndjson\r\nContent-Length: \(body.count)\r\n\r\n"
        client.send(Array(head.utf8) + body)
        let answer = client.readUntilClose(seconds: 120).bytes
        let accepted = try #require(RawResponse(parsing: answer), "no answer to the POST")
        #expect(accepted.status == 202, "\(String(decoding: accepted.body.prefix(500), as: UTF8.self))")
        return try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)
    }

    static func storage(_ url: String) -> String { #"{"url": "\#(url)", "poolSize": 3}"# }

    /// Times each token was answered 200 by the fake.
    static func answeredTimes(_ fake: FakeAPNsProcess) -> [String: Int] {
        var times: [String: Int] = [:]
        for answer in fake.answers() where answer.status == 200 { times[answer.token, default: 0] += 1 }
        return times
    }

    @Test func oneInstanceOnPostgresSendsACampaignAndTheCLIReadsIt() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 1}"#, tokenUpdateWindow: 1200)
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: Self.inFlight, storage: Self.storage(url))
        let server = try ServeProcess(config: config)
        let tokens = (0..<500).map { Self.token(1, $0) }
        let id = try Self.post(server, tokens)
        let done = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
        #expect(done)
        #expect(server.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue?["delivered"]?.int64Value == 500)
        #expect(server.request("GET", "/readyz")?.status == 200)
        let listed = try CLI.run(["campaigns", "--config", config, "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(id))
        // The instance's heartbeat and the schema, from another process.
        let status = try CLI.run(["storage", "status", "--config", config, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let shown = try #require(try JSONParser().parse(Array(status.stdout.utf8)).objectValue)
        #expect(shown["backend"]?.stringValue == "postgresql")
        #expect(shown["schema_version"]?.int64Value == shown["current_version"]?.int64Value)
        #expect(shown["instances"]?.arrayValue?.count == 1)
        #expect(shown["instances"]?.arrayValue?.first?.objectValue?["heartbeat_at"]?.stringValue != nil)
        #expect(shown["queue_depth"]?.int64Value == 0)
        // What becomes of leases and purged rows' space, said as PostgreSQL does it.
        #expect(shown["in_flight_recovery"]?.stringValue == "lease_expiry")
        #expect(shown["space"]?.objectValue?["reclaim"]?.stringValue == "autovacuum")
        #expect((shown["space"]?.objectValue?["bytes"]?.int64Value ?? 0) > 0)
        let text = try CLI.run(["storage", "status", "--config", config])
        #expect(text.stdout.contains("taken over by the next claim of any instance once the lease expires"), "\(text.stdout)")
        #expect(text.stdout.contains("PostgreSQL's autovacuum makes purged rows' space reusable (deliveries: "), "\(text.stdout)")
        let migrated = try CLI.run(["storage", "migrate", "--config", config])
        #expect(migrated.status == 0 && migrated.stdout.contains("schema version"), "\(migrated.stderr)")
        #expect(server.terminate() == 0)
        #expect(Set(Self.answeredTimes(fake).keys) == Set(tokens))
    }

    @Test func aStorageFailureNamesTheURLWithoutItsPassword() throws {
        let fake = try FakeAPNsProcess(script: "{}")
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: 1, storage: #"{"url": "postgresql://pushgate:s3cret-pass@127.0.0.1:1/db"}"#)
        let failed = try CLI.run(["serve", "--config", config])
        #expect(failed.status == 2)
        #expect(failed.stderr.contains("postgresql://pushgate:(redacted)@127.0.0.1:1/db"), "\(failed.stderr)")
        #expect(failed.stderr.contains("unavailable"))
        #expect(!failed.stderr.contains("s3cret"))
        let printed = try CLI.run(["config", "print", "--config", config])
        #expect(!printed.stdout.contains("s3cret") && !printed.stderr.contains("s3cret"))
        let missing = try fake.gatewayConfig(database: "", inFlight: 1,
                                             storage: #"{"url": "postgresql://pushgate@127.0.0.1:1/db", "passwordFile": "/nonexistent/pw"}"#,
                                             name: "missing.json")
        let unreadable = try CLI.run(["serve", "--config", missing])
        #expect(unreadable.status == 2 && unreadable.stderr.contains("storage.passwordFile") && unreadable.stderr.contains("/nonexistent/pw"),
                "\(unreadable.stderr)")
    }

    /// 100,000 devices in `make test`, which runs it alone after the parallel suite
    /// (`PUSHGATE_FLEET_DEVICES=100000`): three debug serves load both cores for minutes,
    /// and timing tests beside them would wait. 20,000 when the variable is not set, as in
    /// a plain `swift test --parallel`.
    @Test func threeInstancesShareOneCampaignThroughTwoKills() throws {
        let devices = ProcessInfo.processInfo.environment["PUSHGATE_FLEET_DEVICES"].flatMap(Int.init) ?? 20_000
        let url = try PostgresCluster.shared().newDatabaseURL()
        let fake = try FakeAPNsProcess(script: "{}", tokenUpdateWindow: 1200)
        defer { fake.stop() }
        // Short leases, so the dead instances' deliveries are taken over within seconds.
        let config = try fake.gatewayConfig(database: "", inFlight: Self.inFlight, claimBatch: 40, storage: Self.storage(url),
                                            dispatcher: #", "leaseSeconds": 3"#, maxBodyBytes: 16 << 20)
        var servers = try (0..<3).map { _ in try ServeProcess(config: config) }
        let tokens = (0..<devices).map { Self.token(2, $0) }
        let id = try Self.post(servers[0], tokens)
        // kill -9 one instance at about 30 % and another at about 60 %.
        for (share, victim) in [(0.3, 0), (0.6, 1)] {
            let reached = eventuallyBlocking(timeout: .seconds(240), interval: .milliseconds(5)) {
                fake.answeredCount() >= Int(Double(devices) * share)
            }
            #expect(reached)
            servers[victim].kill9()
        }
        let survivor = servers[2]
        let finished = eventuallyBlocking(timeout: .seconds(240), interval: .milliseconds(50)) {
            survivor.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
        #expect(finished)
        // Every device final exactly once in storage.
        let counts = survivor.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue
        #expect(counts?["delivered"]?.int64Value == Int64(devices), "\(String(describing: counts))")
        #expect(survivor.terminate() == 0)
        servers.removeAll()
        // The fake's log read once: parsing 100,000 lines takes seconds in a debug build.
        let log = fake.log()
        var times: [String: Int] = [:]
        var providerTokens: Set<String> = []
        var refused = 0
        for entry in log {
            if let token = entry.string("token"), let status = entry.int("status") {
                if status == 200 { times[token, default: 0] += 1 } else { refused += 1 }
            }
            if let sha = entry.string("tokenSha") { providerTokens.insert(sha) }
        }
        #expect(refused == 0, "every request answered 200")
        #expect(times.count == devices, "every token reached")
        let repeats = times.values.reduce(0) { $0 + $1 - 1 }
        #expect(repeats <= 2 * Self.inFlight, "\(repeats) sent twice; two kills of an in-flight window of \(Self.inFlight)")
        #expect(providerTokens.count == 1, "one provider token across the fleet")
    }

    /// One of two instances is stopped (SIGSTOP: a paused VM, a hung process) in the middle
    /// of a campaign, wherever it is — between claims or inside one. The other goes on
    /// sending while it is stopped, takes over its leases once they expire, and completes
    /// the campaign before it resumes; the stopped one, resumed, records nothing over it.
    /// At most its in-flight window is sent twice.
    @Test func anInstanceStoppedWithSIGSTOPStopsNobody() throws {
        let devices = ProcessInfo.processInfo.environment["PUSHGATE_FLEET_DEVICES"].flatMap(Int.init) ?? 20_000
        let url = try PostgresCluster.shared().newDatabaseURL()
        let fake = try FakeAPNsProcess(script: "{}")
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: Self.inFlight, claimBatch: 40, storage: Self.storage(url),
                                            dispatcher: #", "leaseSeconds": 5"#, maxBodyBytes: 16 << 20)
        let a = try ServeProcess(config: config)
        let b = try ServeProcess(config: config)
        let tokens = (0..<devices).map { Self.token(6, $0) }
        let id = try Self.post(a, tokens)
        #expect(eventuallyBlocking(timeout: .seconds(240), interval: .milliseconds(5)) { fake.answeredCount() >= devices * 3 / 10 })
        Foundation.kill(a.process.processIdentifier, SIGSTOP)
        let atStop = fake.answeredCount()
        // The other instance keeps sending while this one is stopped, and finishes the campaign
        // (the stopped one's leases expire and are taken over) before it resumes.
        #expect(eventuallyBlocking(timeout: .seconds(120), interval: .milliseconds(20)) { fake.answeredCount() >= atStop + 1000 },
                "the running instance sent nothing while the other was stopped")
        let finished = eventuallyBlocking(timeout: .seconds(240), interval: .milliseconds(50)) {
            b.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
        #expect(finished)
        Foundation.kill(a.process.processIdentifier, SIGCONT)
        Thread.sleep(forTimeInterval: 2)
        let counts = b.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue
        #expect(counts?["delivered"]?.int64Value == Int64(devices), "\(String(describing: counts))")
        #expect(a.terminate() == 0 && b.terminate() == 0)
        let times = Self.answeredTimes(fake)
        #expect(times.count == devices, "every token reached")
        let repeats = times.values.reduce(0) { $0 + $1 - 1 }
        #expect(repeats <= Self.inFlight, "\(repeats) sent twice; one stopped in-flight window of \(Self.inFlight)")
    }

    /// An instance killed with `kill -9` while it writes a campaign's segments: its
    /// transaction goes with its connection, so no campaign, segment or count is left
    /// half-written, and the other instance goes on accepting and sending.
    @Test func anInstanceKilledDuringIntakeLeavesNothingBehind() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.newDatabaseURL()
        let database = String(url.split(separator: "/").last!)
        let fake = try FakeAPNsProcess(script: "{}")
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: Self.inFlight, claimBatch: 40, storage: Self.storage(url),
                                            maxBodyBytes: 32 << 20)
        let a = try ServeProcess(config: config)
        let b = try ServeProcess(config: config)
        let body = Self.lines((0..<300_000).map { Self.token(7, $0) })
        let port = a.port
        let poster = Thread {
            guard let client = RawHTTPClient(port: port) else { return }
            let head = "POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                + "Content-Type: application/x-ndjson\r\nContent-Length: \(body.count)\r\n\r\n"
            _ = client.send(Array(head.utf8) + body)
            _ = client.readUntilClose(seconds: 60)
        }
        poster.start()
        let writing = "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND xact_start IS NOT NULL AND query LIKE 'INSERT INTO segment%'"
        let inIntake = eventuallyBlocking(timeout: .seconds(120), interval: .milliseconds(1)) { (try? cluster.psql(writing)) != "0" }
        #expect(inIntake, "the intake's segments were never seen being written")
        a.kill9()
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(50)) { (try? cluster.psql(writing)) == "0" },
                "the killed instance's transaction outlived it")
        for table in ["campaigns", "segments", "segment_state", "deliveries", "campaign_counts"] {
            #expect(try cluster.psql("SELECT count(*) FROM \(table)", database: database) == "0", "\(table) after the kill")
        }
        let id = try Self.post(b, (0..<500).map { Self.token(8, $0) })
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            b.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        })
        #expect(b.terminate() == 0)
    }

    @Test func pauseAndCancelThroughOneInstanceStopTheOthers() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 5}"#)
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: 10, claimBatch: 10, storage: Self.storage(url))
        let a = try ServeProcess(config: config)
        let b = try ServeProcess(config: config)
        let tokens = (0..<4000).map { Self.token(3, $0) }
        let id = try Self.post(a, tokens)
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(5)) { fake.answeredCount() >= 200 })
        #expect(a.request("POST", "/v1/campaigns/\(id)/pause")?.status == 200)
        // Within a claim turn nobody claims more; what was in flight (10 per instance) finishes.
        Thread.sleep(forTimeInterval: 1.5)
        let atPause = fake.answeredCount()
        Thread.sleep(forTimeInterval: 1.5)
        #expect(fake.answeredCount() == atPause, "an instance kept sending a paused campaign")
        #expect(b.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "paused")
        #expect(b.request("POST", "/v1/campaigns/\(id)/resume")?.status == 200)
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(5)) { fake.answeredCount() >= atPause + 200 })
        #expect(b.request("POST", "/v1/campaigns/\(id)/cancel")?.status == 200)
        let closed = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            a.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "cancelled"
                && a.object("GET", "/v1/campaigns/\(id)")?["finished_at"]?.stringValue != nil
        }
        #expect(closed)
        Thread.sleep(forTimeInterval: 1)
        let atCancel = fake.answeredCount()
        Thread.sleep(forTimeInterval: 1)
        #expect(fake.answeredCount() == atCancel, "an instance kept sending a cancelled campaign")
        let counts = try #require(a.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue)
        let delivered = counts["delivered"]?.int64Value ?? 0
        let cancelled = counts["cancelled"]?.int64Value ?? 0
        #expect(delivered + cancelled == 4000, "\(["pending", "in-flight", "retrying", "failed"].map { "\($0)=\(counts[$0]?.int64Value ?? -1)" })")
        #expect(delivered == Int64(Self.answeredTimes(fake).count))
        #expect(a.terminate() == 0 && b.terminate() == 0)
    }

    /// The instance posting a dead-token batch is killed with the POST unanswered: once its
    /// sender lease runs out, another instance posts the same batch (same id, same body).
    /// At least once: the receiver gets every dead token and the campaign's end.
    @Test func aWebhookBatchWhoseSenderIsKilledIsSentAgainByAnotherInstance() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let tokens = (0..<300).map { Self.token(6, $0) }
        let dead = Set(tokens.prefix(5))
        // 410 however often asked: a dead token in flight at the kill is sent again.
        let gone = #"{"status": 410, "reason": "Unregistered"}"#
        let answers = dead.map { #""\#($0)": [\#(gone), \#(gone), \#(gone)]"# }.joined(separator: ", ")
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 2, "tokens": {\#(answers)}}"#)
        defer { fake.stop() }
        let receiver = try WebhookReceiverProcess(hang: "dead_tokens", in: fake.directory)
        defer { receiver.stop() }
        let webhook = #"{"url": "http://127.0.0.1:\#(receiver.port)/hook", "secret": "0123456789abcdef-fleet-secret", "#
            + #""timeoutSeconds": 5, "leaseSeconds": 6, "retryBaseSeconds": 0.1, "retryMaxSeconds": 0.5}"#
        let config = try fake.gatewayConfig(database: "", inFlight: 10, storage: Self.storage(url), dispatcher: #", "leaseSeconds": 2"#,
                                            webhook: webhook)
        let a = try ServeProcess(config: config)
        let id = try Self.post(a, tokens)
        // a posts the first dead-token batch; the receiver holds it; a dies.
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(10)) {
            receiver.requests().contains { $0.event == "dead_tokens" }
        })
        a.kill9()
        let b = try ServeProcess(config: config)
        let done = eventuallyBlocking(timeout: .seconds(90), interval: .milliseconds(50)) {
            let answered = receiver.requests().filter(\.answered)
            let reported = Set(answered.filter { $0.event == "dead_tokens" }.flatMap(\.deadTokens))
            return reported == dead && answered.contains { $0.event == "campaign.finished" && $0.body.contains(id) }
        }
        #expect(done, "\(receiver.requests().map { "\($0.event) \($0.batch) answered=\($0.answered)" })")
        let held = try #require(receiver.requests().first { !$0.answered })
        let resent = try #require(receiver.requests().first { $0.answered && $0.event == "dead_tokens" })
        #expect(resent.batch == held.batch && resent.body == held.body, "the same batch, not a new one")
        #expect(b.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue?["unregistered"]?.int64Value == 5)
        #expect(b.terminate() == 0)
    }

    @Test func theDatabaseRestartedMidCampaignLosesNothing() throws {
        let cluster = try PostgresCluster.make()
        defer { cluster.remove() }
        let url = try cluster.newDatabaseURL()
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 2}"#)
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: "", inFlight: Self.inFlight, storage: Self.storage(url))
        let server = try ServeProcess(config: config)
        let tokens = (0..<6000).map { Self.token(4, $0) }
        let id = try Self.post(server, tokens)
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(5)) { fake.answeredCount() >= 1500 })
        try cluster.stop()
        // While it is down: no 202 that is not committed, and readiness says why.
        let refused = try #require(server.request("POST", "/v1/campaigns", headers: [("Content-Type", "application/x-ndjson")],
                                                  body: Self.lines([Self.token(5, 1)])))
        #expect(refused.status == 503)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("storageUnavailable"))
        #expect(refused.headers.contains { $0.0.lowercased() == "retry-after" })
        // Probes answer the readiness monitor's last round (every 100 ms), so the one after
        // the stop may still be the round before it.
        #expect(eventuallyBlocking(timeout: .seconds(10), interval: .milliseconds(50)) {
            guard let ready = server.request("GET", "/readyz") else { return false }
            return ready.status == 503 && String(decoding: ready.body, as: UTF8.self).contains("storage")
        })
        Thread.sleep(forTimeInterval: 2)
        try cluster.start()
        let finished = eventuallyBlocking(timeout: .seconds(120), interval: .milliseconds(50)) {
            server.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
        #expect(finished)
        #expect(server.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue?["delivered"]?.int64Value == 6000)
        #expect(eventuallyBlocking(timeout: .seconds(10), interval: .milliseconds(50)) { server.request("GET", "/readyz")?.status == 200 })
        #expect(server.terminate() == 0)
        let times = Self.answeredTimes(fake)
        #expect(times.count == 6000)
        #expect(times.values.reduce(0) { $0 + $1 - 1 } <= Self.inFlight)
    }
}

/// Tests/PushgateCLITests/Fixtures/webhook_receiver.py: a loopback webhook receiver that
/// answers 204, except that it holds the first request of the event `hang` unanswered.
final class WebhookReceiverProcess {
    struct Request {
        var event: String
        var batch: String
        var body: String
        var answered: Bool
        var deadTokens: [String] {
            let items = (try? JSONParser().parse(Array(body.utf8)))?.objectValue?["dead_tokens"]?.arrayValue ?? []
            return items.compactMap { $0.objectValue?["token"]?.stringValue }
        }
    }

    let port: Int
    private let process = Process()
    private let log: String

    init(hang: String, in folder: URL) throws {
        log = folder.appendingPathComponent("webhook-\(UUID().uuidString).jsonl").path
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/PushgateCLITests/Fixtures/webhook_receiver.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--log", log, "--hang", hang]
        let output = Pipe.closedOnExec()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw ServeProcess.ServeError(message: "webhook_receiver.py did not print its port")
        }
        self.port = port
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        // SIGKILL: the child may inherit the test thread's blocked SIGTERM.
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Every request received so far, in arrival order.
    func requests() -> [Request] {
        guard let data = FileManager.default.contents(atPath: log) else { return [] }
        return data.split(separator: 0x0A).compactMap { line in
            guard let object = (try? JSONParser().parse(Array(line)))?.objectValue else { return nil }
            return Request(event: object["event"]?.stringValue ?? "", batch: object["batch"]?.stringValue ?? "",
                           body: object["body"]?.stringValue ?? "", answered: object["answered"] == .bool(true))
        }
    }
}
