import APNsCore
import APNs
import Foundation
import Storage
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox
import Crypto
import CurlClient

/// The dispatcher with fair lanes: a small campaign behind a big one, and APNs'
/// `Retry-After` between the dispatcher's own attempts.
@Suite struct FairLaneTests {
    static let message = StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10)

    func insert(_ storage: SQLiteCampaignStorage, _ id: String, devices: [String], lane: Lane? = nil) throws {
        var campaign = NewCampaign(id: id, createdAt: SystemClock().wallSeconds(), dryRun: false, message: Self.message,
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        campaign.lane = lane
        _ = try storage.insert(campaign, deliveries: devices.map { NewDelivery(token: $0) }, now: SystemClock().wallSeconds())
    }

    @Test func aTwoDeviceCampaignBehindABlastIsDeliveredFirst() async throws {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        // 20,000 sends of 5 ms, 50 at a time: the blast takes about 2 s on an idle machine.
        let sender = ScriptedSender(delayNanoseconds: 5_000_000)
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: Metrics(),
                                    options: .init(inFlight: 50, claimBatch: 50), clock: SystemClock())
        try insert(storage, "blast", devices: (0..<20_000).map { Fixtures.token("b", $0) })
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        #expect(await eventually(timeout: .seconds(30)) { sender.sent.withLock { $0.count } >= 500 }, "the blast is under way")
        try insert(storage, "code", devices: [Fixtures.token("c", 1), Fixtures.token("c", 2)])
        dispatcher.wake()
        let postedAt = sender.sent.withLock { $0.count }
        #expect(await eventually(timeout: .seconds(30)) { (try? storage.campaign(id: "code"))?.finishedAt != nil })
        let blast = try #require(try storage.campaign(id: "blast"))
        let codeAt = sender.sent.withLock { $0.firstIndex(of: Fixtures.token("c", 2)) ?? -1 }
        // Within a few claim turns of being accepted (a turn claims at most 50 here), not
        // behind the blast's 19,000-odd pending devices.
        #expect(codeAt >= 0 && codeAt - postedAt <= 200,
                "posted after \(postedAt) sends; its last device was send \(codeAt); the blast had \(blast.counts[.pending] ?? 0) pending")
        let code = try storage.campaign(id: "code")
        #expect(blast.lane == .bulk && code?.lane == .transactional)
    }

    /// The real client against the fake: a 429 with `Retry-After: 2`, the client's own
    /// retries off; the dispatcher's next attempt waits the 2 s (its backoff is 10 ms).
    @Test func theNextAttemptWaitsForRetryAfter() async throws {
        let token = Fixtures.token("fa", 1)
        let fake = try FakeAPNsServer(scriptJSON: #"""
            {"tokens": {"\#(token)": [{"status": 429, "reason": "TooManyRequests", "retryAfter": 2}, {"status": 200}]}}
            """#)
        defer { fake.stop() }
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNsServer.keyFile), teamId: FakeAPNsServer.teamId,
                                          keyId: FakeAPNsServer.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile), clock: SystemClock())
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(maxAttempts: 1), clock: SystemClock())
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        try insert(storage, "busy", devices: [token])
        let dispatcher = Dispatcher(storage: storage, sender: client, dryRunSender: client, metrics: Metrics(),
                                    options: .init(maxAttempts: 3, retryBaseSeconds: 0.01, retryMaxSeconds: 0.01), clock: SystemClock())
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        #expect(await eventually(timeout: .seconds(30)) { (try? storage.campaign(id: "busy"))?.counts[.delivered] == 1 })
        let times = fake.log().compactMap { $0["time"]?.doubleValue }
        try #require(times.count == 2)
        #expect(times[1] - times[0] >= 1.95, "the second attempt came \(times[1] - times[0]) s after the 429 with Retry-After: 2")
        let rows = try storage.results(campaign: try #require(try storage.campaign(id: "busy")).seq, offset: 0, limit: 1)
        #expect(rows.first?.attempts == 2)
    }
}
