import Foundation
import HTTPServer
import PostgresStorage
import Storage
import StrictJSON
import Synchronization
import Testing
import TestSupport
@testable import Gateway
@testable import Outbox
import Crypto
import Timing

/// Retention with an injected clock: only what is old and finished goes, dead tokens
/// stay, and over many campaigns the file stops growing (freed pages are reused and given
/// back). The `campaign.finished` webhook event, signed and batched like dead tokens.
@Suite struct RetentionTests {
    static let message = StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10)
    static let day = 86_400.0

    func storage() throws -> SQLiteCampaignStorage {
        try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
    }

    /// A campaign of `devices` written and delivered at the clock's time (one dead token).
    func runCampaign(_ storage: any CampaignStorage, _ id: String, devices: Int, clock: ManualClock) throws {
        let now = clock.wallSeconds()
        let campaign = NewCampaign(id: id, createdAt: now, dryRun: false, message: Self.message, body: Array(#"{"aps":{"alert":"hi"}}"#.utf8),
                                   apnsIDPrefix: "00000000-0000-4000-8000-",
                                   idempotency: IdempotencyClaim(key: "key-" + id, requestSHA256: "x", notBefore: 0))
        _ = try storage.insert(campaign, deliveries: (0..<devices).map { NewDelivery(token: Fixtures.token(String(id.suffix(4)), $0)) }, now: now)
        while case let claims = try storage.claim(limit: 500, lease: LeaseTerms(owner: "t", seconds: 30), now: now), !claims.isEmpty {
            try storage.record(claims.map {
                $0.index == 0 ? DeliveryUpdate(campaign: $0.campaign, index: 0, state: .unregistered, status: 410, reason: "Unregistered",
                                               timestampMilliseconds: 1_700_000_000_000, lease: $0.lease)
                    : DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease)
            }, now: now)
        }
    }

    @Test func onlyOldFinishedCampaignsArePurgedInSmallBatches() throws {
        let clock = ManualClock()
        let storage = try storage()
        try runCampaign(storage, "old-0001", devices: 250, clock: clock)
        clock.advance(by: .seconds(20 * Self.day))
        try runCampaign(storage, "mid-0002", devices: 10, clock: clock)
        let unfinished = NewCampaign(id: "open-0003", createdAt: clock.wallSeconds(), dryRun: false, message: Self.message, body: [],
                                     apnsIDPrefix: "00000000-0000-4000-8000-")
        _ = try storage.insert(unfinished, deliveries: [NewDelivery(token: Fixtures.token("0003", 1))], now: clock.wallSeconds())
        clock.advance(by: .seconds(11 * Self.day))

        let retention = Retention(storage: storage, options: .init(retentionSeconds: 30 * Self.day, batchRows: 100, pauseSeconds: 0), clock: clock)
        let pass = retention.runOnce()
        #expect(pass.campaigns == 1 && pass.deliveries == 250)
        #expect(pass.transactions >= 3, "250 rows in batches of 100")
        #expect(try storage.campaign(id: "old-0001") == nil)
        #expect(try storage.campaign(id: "mid-0002") != nil && storage.campaign(id: "open-0003") != nil)
        #expect(try storage.idempotencyRecord(key: "key-old-0001", notBefore: 0) == nil)
        #expect(try storage.idempotencyRecord(key: "key-mid-0002", notBefore: 0) != nil)
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).count == 2, "dead tokens are kept")
        #expect(retention.runOnce() == Retention.Pass(transactions: 2), "nothing more to do: one look for campaigns, one for Live Activity tokens")
        clock.advance(by: .seconds(20 * Self.day))
        #expect(retention.runOnce().campaigns == 1)
        #expect(try storage.campaign(id: "open-0003") != nil, "an unfinished campaign is never purged")
    }

    /// Update tokens not reported again within their retention go, in batches, on both
    /// backends; a token reported again in time, and push-to-start tokens, stay.
    @Test(arguments: ["sqlite", "postgres"]) func oldLiveActivityUpdateTokensArePurged(_ backend: String) throws {
        let clock = ManualClock()
        let storage: any CampaignStorage = backend == "sqlite" ? try self.storage()
            : try PostgresCampaignStorage(options: .init(url: try PostgresCluster.shared().newDatabaseURL(), poolSize: 2, instance: "t", clock: SystemClock()))
        func register(_ n: Int, _ kind: LiveActivityToken.Kind = .update) throws {
            _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: Fixtures.token("0a0a", n), kind: kind,
                                                                        activity: kind == .update ? "act" : ""),
                                                      atMilliseconds: clock.millisecondsSince1970())
        }
        for n in 0..<5 { try register(n) }
        try register(9, .pushToStart)
        clock.advance(by: .seconds(3600))
        try register(0)  // reported again: its time is renewed
        clock.advance(by: .seconds(23.5 * 3600))
        let retention = Retention(storage: storage, options: .init(batchRows: 2, pauseSeconds: 0, liveActivityTokenRetentionSeconds: 24 * 3600),
                                  clock: clock)
        let pass = retention.runOnce()
        #expect(pass.liveActivityTokens == 4 && pass.campaigns == 0)
        #expect(pass.summary(reclaimsFreePages: false).contains("and 4 Live Activity update tokens"), "\(pass)")
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act") == [Fixtures.token("0a0a", 0)])
        #expect(try storage.forgetLiveActivityToken(app: "shop", token: Fixtures.token("0a0a", 9)), "push-to-start tokens stay")
    }

    /// On PostgreSQL a pass purges the same rows and asks for no pages back: autovacuum makes
    /// their space reusable, and the log line says so instead of "0 pages given back".
    @Test func onPostgreSQLThePurgedRowsSpaceIsLeftToAutovacuum() throws {
        let clock = ManualClock()
        let storage = try PostgresCampaignStorage(options: .init(url: try PostgresCluster.shared().newDatabaseURL(), poolSize: 2, instance: "t", clock: SystemClock()))
        #expect(!storage.reclaimsFreePages)
        try runCampaign(storage, "old-0001", devices: 250, clock: clock)
        clock.advance(by: .seconds(31 * Self.day))
        let retention = Retention(storage: storage, options: .init(retentionSeconds: 30 * Self.day, batchRows: 100, pauseSeconds: 0), clock: clock)
        let pass = retention.runOnce()
        #expect(pass.campaigns == 1 && pass.deliveries == 250 && pass.pagesReclaimed == 0)
        #expect(pass.summary(reclaimsFreePages: storage.reclaimsFreePages)
                == "pushgate: retention: purged 1 finished campaigns (250 device rows), their space reused by PostgreSQL's autovacuum")
        #expect(try storage.campaign(id: "old-0001") == nil)
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).count == 1, "dead tokens are kept")
        let sqlite = try self.storage()
        try runCampaign(sqlite, "old-0002", devices: 250, clock: clock)
        clock.advance(by: .seconds(31 * Self.day))
        let given = Retention(storage: sqlite, options: .init(retentionSeconds: 30 * Self.day, pauseSeconds: 0), clock: clock).runOnce()
        #expect(given.pagesReclaimed > 0)
        #expect(given.summary(reclaimsFreePages: sqlite.reclaimsFreePages).hasSuffix("\(given.pagesReclaimed) pages given back"))
    }

    @Test func theDatabaseStopsGrowingOverRepeatedCampaigns() throws {
        let clock = ManualClock()
        let storage = try storage()
        let retention = Retention(storage: storage, options: .init(retentionSeconds: 2 * Self.day, pauseSeconds: 0), clock: clock)
        var sizes: [Int] = []
        for round in 0..<24 {
            try runCampaign(storage, String(format: "soak-%04d", round), devices: 400, clock: clock)
            clock.advance(by: .seconds(Self.day))
            retention.runOnce()
            sizes.append(try storage.pageStatistics().pages)
        }
        // After the first few rounds (the window fills: about two campaigns are kept), the
        // file stays where it was (within 8 KB): the pages of purged campaigns are reused or given back.
        let settled = sizes[4]
        let slack = 8192 / (try storage.pageStatistics().pageSize)
        #expect(sizes.suffix(18).allSatisfy { $0 <= settled + slack }, "pages per round: \(sizes)")
        #expect(try storage.campaigns(limit: 100, before: nil).count <= 3)
    }

    @Test func campaignFinishedIsSignedBatchedAndRetriedWithTheSameBatchID() async throws {
        let receiver = WebhookReceiver(failures: 1)
        let server = try HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), responder: receiver, clock: SystemClock())
        let storage = try storage()
        let clock = ManualClock()
        try runCampaign(storage, "done-0001", devices: 3, clock: clock)
        try storage.acknowledgeFeedback(through: Int64.max)  // only the campaign event here
        var settings = DurableSettings.Webhook(url: "http://127.0.0.1:\(server.port)/hook", secret: FeedbackWebhookTests.secret)
        settings.retryBaseSeconds = 0.02
        settings.retryMaxSeconds = 0.05
        let webhook = FeedbackWebhook(settings: settings, storage: storage, clock: SystemClock())
        webhook.start()
        _ = await eventually(timeout: .seconds(10)) { webhook.delivered.load(ordering: .relaxed) >= 1 }
        webhook.stop()
        _ = server.shutdown(deadlineSeconds: 1)
        let requests = receiver.received.withLock { $0 }
        #expect(requests.count == 2)
        guard requests.count == 2 else { return }
        #expect(requests[0].body == requests[1].body && requests[0].header("x-pushgate-batch") == requests[1].header("x-pushgate-batch"))
        let request = requests[1]
        #expect(request.header("x-pushgate-event") == "campaign.finished")
        #expect(request.header("x-pushgate-signature") == "sha256=" + HMACSHA256.hex(key: Array(FeedbackWebhookTests.secret.utf8), message: request.body))
        let event = try #require(try JSONParser().parse(request.body).objectValue?["campaigns"]?.arrayValue?.first?.objectValue)
        #expect(event["event"] == .string("campaign.finished"))
        #expect(event["id"] == .string("done-0001"))
        #expect(event["status"] == .string("completed"))
        #expect(event["counts"]?.objectValue?["delivered"] == .number("2"))
        #expect(try storage.pendingCampaignEvents(limit: 10).isEmpty)
    }
}
