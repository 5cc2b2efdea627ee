import Foundation
import StrictJSON
import Testing
import TestSupport

/// A real `pushgate serve` killed (`kill -9`) during intake and during sending, two
/// instances sharing one campaign, and pause and cancel mid-campaign, on both backends.
/// The fake APNs's own log is the judge: every device answered 200 exactly once, except at
/// most `dispatcher.inFlight` per kill sent twice; nothing leaves after a pause or cancel is
/// answered beyond what was already written. No timing assertions: waits have generous
/// deadlines, and a slow machine only makes an observation window catch less.
@Suite(.serialized) struct DurableSafetyTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static let inFlight = 20
    /// What a window holds for sure once APNs stops answering: the dispatcher claims again
    /// only when half of its window is free, so up to that much less than all of it.
    static let windowFilled = inFlight - inFlight / 2 + 1

    static func token(_ campaign: Int, _ n: Int) -> String {
        let hex = String(campaign * 1_000_000 + n, radix: 16)
        return String(repeating: "e", count: 64 - hex.count) + hex
    }

    /// The storage section for `backend`, in `fake`'s folder or a new database of the test cluster.
    static func storage(_ backend: Backend, _ fake: FakeAPNsProcess) throws -> String {
        switch backend {
        case .sqlite: #"{"path": "\#(fake.directory.appendingPathComponent("pushgate.db").path)"}"#
        case .postgres: PostgresFleetTests.storage(try PostgresCluster.shared().newDatabaseURL())
        }
    }

    /// APNs requests wait up to 120 s for their answer: answers held by the fake (and a
    /// loaded machine) must not time out and be sent again. `leaseSeconds`: short where a dead or frozen instance's devices must be taken over
    /// within the test; the default (30 s) where nothing should be, so a renewal late on a
    /// loaded machine cannot cause a takeover.
    static func config(_ backend: Backend, _ fake: FakeAPNsProcess, leaseSeconds: Int = 30) throws -> String {
        try fake.gatewayConfig(database: "", inFlight: inFlight, claimBatch: inFlight, storage: storage(backend, fake),
                               dispatcher: #", "leaseSeconds": \#(leaseSeconds), "retryBaseSeconds": 0.05, "retryMaxSeconds": 0.2"#,
                               maxBodyBytes: 16 << 20, apns: #", "requestTimeoutSeconds": 120"#)
    }

    /// Requests the fake has received (answered or held), counted cheaply from its log.
    static func receivedCount(_ fake: FakeAPNsProcess) -> Int {
        guard let data = FileManager.default.contents(atPath: fake.directory.appendingPathComponent("received.jsonl").path) else { return 0 }
        return data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
    }

    /// Times each token was answered 200, and how many tokens were answered 200 more than once.
    static func judge(_ fake: FakeAPNsProcess) -> (times: [String: Int], repeats: Int) {
        let times = PostgresFleetTests.answeredTimes(fake)
        return (times, times.values.reduce(0) { $0 + $1 - 1 })
    }

    static func campaign(_ server: ServeProcess, _ id: String) -> JSONObject? { server.object("GET", "/v1/campaigns/\(id)?per_page=1") }

    static func waitForCompletion(_ server: ServeProcess, _ ids: [String], seconds: Int64 = 180) -> Bool {
        eventuallyBlocking(timeout: .seconds(seconds), interval: .milliseconds(50)) {
            ids.allSatisfy { campaign(server, $0)?["status"]?.stringValue == "completed" }
        }
    }

    static func ndjson(_ tokens: [String]) -> [UInt8] { PostgresFleetTests.lines(tokens) }

    /// Sends a whole POST and returns the connection without reading the answer.
    static func send(_ server: ServeProcess, _ tokens: [String], key: String, extra: String = "") throws -> RawHTTPClient {
        var body = ndjson(tokens)
        if !extra.isEmpty, let end = body.firstIndex(of: 0x0A) { body.replaceSubrange(end - 1..<end, with: Array((extra + "}").utf8)) }
        let client = try #require(RawHTTPClient(port: server.port))
        let head = "POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nIdempotency-Key: \(key)\r\n"
            + "Content-Type: application/x-ndjson\r\nContent-Length: \(body.count)\r\n\r\n"
        client.send(Array(head.utf8) + body)
        return client
    }

    static func accepted(_ answer: [UInt8]) -> JSONObject? {
        guard let response = RawResponse(parsing: answer), response.status == 202 else { return nil }
        return (try? JSONParser().parse(response.body))?.objectValue
    }

    // MARK: kill -9 during intake

    /// The 202 never came: after the restart the campaign exists with every device or not
    /// at all, and the same request with the same key then finds it or creates it whole.
    /// Big campaigns scheduled an hour ahead (intake only, nothing sent) are killed at
    /// four points of the intake time measured first, the last near its end (where the
    /// commit may have happened and the 202 not yet been written); then a small campaign
    /// sent at once is killed half-way into its intake, and every device of it is sent once.
    @Test(arguments: Backend.allCases) func killedDuringIntakeLeavesAllOrNothing(_ backend: Backend) throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 1}"#)
        defer { fake.stop() }
        let config = try Self.config(backend, fake, leaseSeconds: 3)
        let later = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
        let scheduled = #","send_at":"\#(later)""#
        let big = 20_000
        var server = try ServeProcess(config: config)
        let started = Date()
        let measured = try Self.send(server, (0..<big).map { Self.token(1, $0) }, key: "measure", extra: scheduled)
            .readUntilClose(seconds: 180).bytes
        let intakeSeconds = Date().timeIntervalSince(started)
        try #require(Self.accepted(measured) != nil, "no 202 for the measured campaign")
        var expectedDevices = [big]

        /// Posts `tokens` with `key`, kills the server `after` seconds, restarts it, checks that
        /// every campaign is whole, and posts again: returns the campaign's id.
        func killedRound(_ tokens: [String], key: String, extra: String, after: Double) throws -> String {
            let client = try Self.send(server, tokens, key: key, extra: extra)
            Thread.sleep(forTimeInterval: after)
            server.kill9()
            let answeredBeforeKill = Self.accepted(client.readUntilClose(seconds: 5).bytes) != nil
            server = try ServeProcess(config: config)
            let listed = try #require(server.object("GET", "/v1/campaigns?limit=100")?["campaigns"]?.arrayValue).compactMap(\.objectValue)
            let sizes = listed.compactMap { $0["devices"]?.int64Value }.map(Int.init)
            for campaign in listed {
                let counts = campaign["counts"]?.objectValue ?? JSONObject()
                let total = counts.keys.reduce(Int64(0)) { $0 + (counts[$1]?.int64Value ?? 0) }
                #expect(campaign["devices"]?.int64Value == total, "a campaign's counts do not add up to its devices: \(total)")
            }
            let survived = sizes.count == expectedDevices.count + 1
            #expect(sizes.sorted() == (survived ? expectedDevices + [tokens.count] : expectedDevices).sorted(),
                    "campaigns of \(sizes) devices: one with part of its devices, or one lost")
            if answeredBeforeKill { #expect(survived, "the 202 came, so the campaign must exist") }
            let again = try #require(Self.accepted(try Self.send(server, tokens, key: key, extra: extra).readUntilClose(seconds: 180).bytes),
                                     "no 202 for the request sent again")
            #expect(again["replayed"] == .bool(survived))
            #expect(again["devices"]?.int64Value == Int64(tokens.count))
            expectedDevices.append(tokens.count)
            print("DurableSafetyTests \(backend) intake \(key): killed at \(String(format: "%.2f", after)) s "
                  + "(intake measured \(String(format: "%.2f", intakeSeconds)) s for \(big)): 202 before the kill \(answeredBeforeKill), "
                  + "campaign committed \(survived)")
            return try #require(again["id"]?.stringValue)
        }

        for (round, share) in [0.2, 0.45, 0.7, 0.95].enumerated() {
            _ = try killedRound((0..<big).map { Self.token(10 + round, $0) }, key: "scheduled-\(round)", extra: scheduled,
                                after: intakeSeconds * share)
        }
        let small = 3000
        let tokens = (0..<small).map { Self.token(20, $0) }
        let id = try killedRound(tokens, key: "sent", extra: "", after: intakeSeconds * Double(small) / Double(big) / 2)
        #expect(Self.waitForCompletion(server, [id]))
        #expect(Self.campaign(server, id)?["counts"]?.objectValue?["delivered"]?.int64Value == Int64(small))
        #expect(server.terminate() == 0)
        let (times, repeats) = Self.judge(fake)
        #expect(Set(times.keys) == Set(tokens), "every token of the campaign sent at once reached, and no scheduled one")
        // The kill may come after the commit, with the campaign already sending.
        #expect(repeats <= Self.inFlight, "\(repeats) sent twice; the in-flight window is \(Self.inFlight)")
    }

    // MARK: kill -9 during sending

    /// Two kills while devices are claimed, checkpointed and retried (some tokens answer 429
    /// first), each followed by a restart: every device answered 200 once, at most one
    /// in-flight window per kill sent twice.
    @Test(arguments: Backend.allCases) func killedTwiceWhileSendingEveryDeviceIsAnsweredOnce(_ backend: Backend) throws {
        let devices = 6000
        let tokens = (0..<devices).map { Self.token(3, $0) }
        let retried = stride(from: 7, to: devices, by: 97).map { tokens[$0] }
        let answers = retried.map { #""\#($0)": [{"status": 429, "reason": "TooManyRequests"}, {"status": 200}]"# }.joined(separator: ", ")
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 2, "tokens": {\#(answers)}}"#)
        defer { fake.stop() }
        let config = try Self.config(backend, fake, leaseSeconds: 3)
        var server = try ServeProcess(config: config)
        let id = try PostgresFleetTests.post(server, tokens)
        for share in [0.25, 0.6] {
            #expect(eventuallyBlocking(timeout: .seconds(180), interval: .milliseconds(2)) { fake.answeredCount() >= Int(Double(devices) * share) })
            server.kill9()
            #expect(fake.answeredCount() < devices + retried.count, "the campaign finished before the kill; the test proved nothing")
            server = try ServeProcess(config: config)
        }
        #expect(Self.waitForCompletion(server, [id]))
        let counts = Self.campaign(server, id)?["counts"]?.objectValue
        #expect(counts?["delivered"]?.int64Value == Int64(devices), "\(String(describing: counts))")
        #expect(server.terminate() == 0)
        let (times, repeats) = Self.judge(fake)
        #expect(Set(times.keys) == Set(tokens), "every token reached")
        #expect(repeats <= 2 * Self.inFlight, "\(repeats) sent twice; two kills of an in-flight window of \(Self.inFlight)")
        let refusedFirst = Set(fake.answers().filter { $0.status == 429 }.map(\.token))
        #expect(refusedFirst == Set(retried), "each scripted token answered 429 first, then retried")
        print("DurableSafetyTests \(backend) sending: \(repeats) sent twice over two kills")
    }

    // MARK: two instances

    @Test func twoInstancesOnOnePostgresDatabaseShareOneCampaign() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 3}"#)
        defer { fake.stop() }
        let config = try Self.config(.postgres, fake)
        let a = try ServeProcess(config: config)
        let b = try ServeProcess(config: config)
        let devices = 5000
        let tokens = (0..<devices).map { Self.token(4, $0) }
        let id = try PostgresFleetTests.post(a, tokens)
        #expect(Self.waitForCompletion(b, [id]))
        #expect(Self.campaign(a, id)?["counts"]?.objectValue?["delivered"]?.int64Value == Int64(devices))
        func sent(_ server: ServeProcess) -> Double {
            let text = String(decoding: server.request("GET", "/metrics")?.body ?? [], as: UTF8.self)
            return text.split(separator: "\n").filter { $0.hasPrefix("pushgate_notifications_total{") }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
        }
        let (sentA, sentB) = (sent(a), sent(b))
        #expect(sentA > 0 && sentB > 0, "both instances sent: \(sentA) and \(sentB)")
        #expect(a.terminate() == 0 && b.terminate() == 0)
        let (times, repeats) = Self.judge(fake)
        #expect(Set(times.keys) == Set(tokens))
        #expect(repeats == 0, "\(repeats) sent twice with no instance killed or frozen (leases of 30 s)")
        print("DurableSafetyTests two instances: \(sentA) + \(sentB) sent, \(repeats) twice")
    }

    /// An instance frozen (SIGSTOP) between claims with its window of requests written: the
    /// other instance takes its devices over once their leases expire and finishes the
    /// campaign; when the frozen one resumes, its late answers (an old fencing number)
    /// change nothing. At most its window is sent twice.
    @Test func aFrozenInstanceStopsNobodyAndItsLateResultsChangeNothing() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 2}"#)
        defer { fake.stop() }
        let config = try Self.config(.postgres, fake, leaseSeconds: 3)
        let a = try ServeProcess(config: config)
        let b = try ServeProcess(config: config)
        let devices = 4000
        let tokens = (0..<devices).map { Self.token(6, $0) }
        let id = try PostgresFleetTests.post(a, tokens)
        #expect(eventuallyBlocking(timeout: .seconds(120), interval: .milliseconds(2)) { fake.answeredCount() >= 500 })
        // Both windows written and held at APNs, then one instance frozen.
        fake.holdAnswers()
        let full = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(10)) {
            Self.receivedCount(fake) - fake.answeredCount() >= 2 * Self.windowFilled
        }
        #expect(full, "\(Self.receivedCount(fake) - fake.answeredCount()) requests held; expected both windows")
        Foundation.kill(a.process.processIdentifier, SIGSTOP)
        defer { Foundation.kill(a.process.processIdentifier, SIGCONT) }
        fake.releaseAnswers()
        #expect(Self.waitForCompletion(b, [id]), "the campaign did not finish while one instance was frozen")
        let finished = Self.campaign(b, id)
        Foundation.kill(a.process.processIdentifier, SIGCONT)
        // The resumed instance reads its answers and records them under leases taken over.
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(50)) { a.request("GET", "/healthz")?.status == 200 })
        Thread.sleep(forTimeInterval: 2)  // an observation window for its late records
        let after = Self.campaign(b, id)
        #expect(after?["finished_at"] == finished?["finished_at"], "a late result changed when the campaign finished")
        #expect(after?["counts"] == finished?["counts"], "a late result changed the counts")
        #expect(after?["counts"]?.objectValue?["delivered"]?.int64Value == Int64(devices))
        #expect(a.terminate() == 0 && b.terminate() == 0)
        let (times, repeats) = Self.judge(fake)
        #expect(Set(times.keys) == Set(tokens), "every token reached")
        #expect(repeats >= 1, "nothing of the frozen instance's window was taken over; the test proved nothing")
        #expect(repeats <= Self.inFlight, "\(repeats) sent twice; the frozen instance's window is \(Self.inFlight)")
        print("DurableSafetyTests frozen instance: \(repeats) sent twice")
    }

    // MARK: pause and cancel

    /// APNs holds its answers until the window is full, then the campaign is paused (later
    /// cancelled): once the answer to that came, nothing new reaches APNs — only the held
    /// requests, written before, are answered.
    @Test(arguments: Backend.allCases) func pauseAndCancelMidCampaignSendNothingNew(_ backend: Backend) throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 1}"#)
        defer { fake.stop() }
        let server = try ServeProcess(config: try Self.config(backend, fake))
        let devices = 4000
        let tokens = (0..<devices).map { Self.token(5, $0) }
        let id = try PostgresFleetTests.post(server, tokens)

        /// Holds APNs' answers once `after` were answered, waits for the full window, then
        /// `action`; returns what APNs had received when the action was answered.
        func stop(after: Int, _ action: String) -> Int {
            #expect(eventuallyBlocking(timeout: .seconds(120), interval: .milliseconds(2)) { fake.answeredCount() >= after })
            fake.holdAnswers()
            let full = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(10)) {
                Self.receivedCount(fake) - fake.answeredCount() >= Self.windowFilled
            }
            #expect(full, "the in-flight window did not fill: \(Self.receivedCount(fake) - fake.answeredCount()) held")
            #expect(server.request("POST", "/v1/campaigns/\(id)/\(action)")?.status == 200)
            let atAnswer = Self.receivedCount(fake)
            fake.releaseAnswers()
            return atAnswer
        }
        func inFlightCount() -> Int64? { Self.campaign(server, id)?["counts"]?.objectValue?["in-flight"]?.int64Value }

        let atPause = stop(after: 500, "pause")
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) { inFlightCount() == 0 })
        Thread.sleep(forTimeInterval: 1.5)  // an observation window: a late claim would send by now
        #expect(Self.receivedCount(fake) == atPause, "\(Self.receivedCount(fake) - atPause) requests after the pause was answered")
        #expect(Self.campaign(server, id)?["status"]?.stringValue == "paused")

        #expect(server.request("POST", "/v1/campaigns/\(id)/resume")?.status == 200)
        let atCancel = stop(after: atPause + 1000, "cancel")
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            let shown = Self.campaign(server, id)
            return shown?["status"]?.stringValue == "cancelled" && shown?["finished_at"]?.stringValue != nil
        })
        Thread.sleep(forTimeInterval: 1.5)
        #expect(Self.receivedCount(fake) == atCancel, "\(Self.receivedCount(fake) - atCancel) requests after the cancel was answered")
        let counts = try #require(Self.campaign(server, id)?["counts"]?.objectValue)
        let delivered = counts["delivered"]?.int64Value ?? 0
        let cancelled = counts["cancelled"]?.int64Value ?? 0
        #expect(delivered + cancelled == Int64(devices), "\(["pending", "in-flight", "retrying", "failed"].map { "\($0)=\(counts[$0]?.int64Value ?? -1)" })")
        #expect(server.terminate() == 0)
        let (times, repeats) = Self.judge(fake)
        #expect(delivered == Int64(times.count), "delivered as APNs answered 200")
        #expect(repeats == 0, "\(repeats) sent twice with no instance killed")
        #expect(cancelled > 0, "the cancel came after the campaign had finished; the test proved nothing")
    }
}
