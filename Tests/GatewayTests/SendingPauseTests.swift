import APNsCore
import APNs
import Foundation
import Payloads
import Storage
import Synchronization
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox
import Crypto
import CurlClient

/// Holds the key (TooManyProviderTokenUpdates) for everything sent before the first pause ends,
/// as APNs does when another process minted a token for the key; records each send.
final class TokenUpdateRefusingSender: NotificationSender {
    let pausedUntil = Mutex<Double?>(nil)
    let refusedOnce = Atomic<Bool>(false)
    let sends = Mutex<[String: Int]>([:])
    let pauseSeconds: Double

    init(pauseSeconds: Double) { self.pauseSeconds = pauseSeconds }

    func send(_ request: APNsRequest) async -> DeliveryResult {
        sends.withLock { $0[request.deviceToken, default: 0] += 1 }
        let now = Date().timeIntervalSince1970
        let refuse = pausedUntil.withLock { until -> Bool in
            if !refusedOnce.load(ordering: .relaxed) {
                refusedOnce.store(true, ordering: .relaxed)
                until = now + pauseSeconds
            }
            return (until ?? 0) > now
        }
        // What APNsClient answers while the key is held.
        return refuse ? .transportFailed(TransportFailure(.keyStopped, "APNs answered 429 TooManyProviderTokenUpdates: paused"))
            : .delivered(apnsId: request.apnsID ?? "")
    }
}

@Suite struct SendingPauseTests {
    static let route = CampaignRoute(app: "default", environment: "sandbox", dryRun: false)

    @Test func tooManyTokenUpdatesWaitsForThePauseAndCostsNoAttempt() async throws {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let sender = TokenUpdateRefusingSender(pauseSeconds: 0.6)
        let tokens = (0..<20).map { Fixtures.token("e", $0) }
        _ = try storage.insert(NewCampaign(id: "paused", createdAt: 1, dryRun: false,
                                           message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                           body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-"),
                               deliveries: tokens.map { NewDelivery(token: $0) }, now: 1)
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: Metrics(),
                                    heldUntil: { _ in sender.pausedUntil.withLock { $0 } },
                                    options: .init(inFlight: 4, claimBatch: 4, maxAttempts: 1, retryBaseSeconds: 0.01, retryMaxSeconds: 0.05), clock: SystemClock())
        let started = Date()
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        #expect(await dispatcher.waitUntilIdle(deadlineSeconds: 20))
        #expect(Date().timeIntervalSince(started) >= 0.5, "nothing was sent again before the pause ended")
        let summary = try #require(try storage.campaign(id: "paused"))
        #expect(summary.counts[.delivered] == 20, "maxAttempts is 1, yet the refused devices were delivered")
        let rows = try storage.results(campaign: summary.seq, offset: 0, limit: 100)
        #expect(rows.allSatisfy { $0.attempts == 1 }, "the refused attempt was not counted")
        let sends = sender.sends.withLock { $0 }
        let refused = sends.values.filter { $0 == 2 }.count
        #expect(refused >= 1 && refused <= 4, "only what was in flight at the refusal was sent twice (\(refused))")
        #expect(sends.values.allSatisfy { $0 <= 2 }, "never retried blindly")
    }

    /// The real client against the fake: APNs refuses the key, the campaign waits with no
    /// attempt spent (maxAttempts 1), and once the key is accepted again a probe finds it
    /// and every device is delivered.
    @Test func aStoppedKeyKeepsTheCampaignQueuedUntilAProbeFindsItAccepted() async throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"keyProblem": "InvalidProviderToken"}"#)
        defer { fake.stop() }
        // The dispatcher and the key share a clock moved by hand: no probe is due until the
        // test moves it (tokens are issued at its time, which starts at the real one).
        let clock = ManualClock(wallSeconds: Date().timeIntervalSince1970)
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNsServer.keyFile), teamId: FakeAPNsServer.teamId,
                                          keyId: FakeAPNsServer.keyId, clock: clock,
                                          probeBackoff: Backoff(initial: .seconds(30), maximum: .seconds(30)))
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile), clock: SystemClock())
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(maxAttempts: 1), clock: SystemClock())
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let devices = (0..<200).map { Fixtures.token("f", $0) }
        _ = try storage.insert(NewCampaign(id: "stopped", createdAt: 1, dryRun: false,
                                           message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                           body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-"),
                               deliveries: devices.map { NewDelivery(token: $0) }, now: clock.wallSeconds())
        let dispatcher = Dispatcher(storage: storage, sender: client, dryRunSender: client, metrics: Metrics(),
                                    heldUntil: { _ in tokens.hold().map { Double($0.until) } },
                                    // A long lease: the clock jumps ahead faster than a loaded machine sends.
                                    options: .init(inFlight: 50, claimBatch: 50, maxAttempts: 1, retryBaseSeconds: 0.01, retryMaxSeconds: 0.05,
                                                   lease: LeaseTerms(instance: InstanceID.current(now: clock.wallSeconds()), seconds: 86_400)),
                                    clock: clock)
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        #expect(await eventually(timeout: .seconds(20)) { tokens.hold()?.kind == .stopped && dispatcher.inFlight == 0 })
        try await Task.sleep(nanoseconds: 300_000_000)
        let summary = try #require(try storage.campaign(id: "stopped"))
        #expect((summary.counts[.failed] ?? 0) == 0 && (summary.counts[.delivered] ?? 0) == 0)
        #expect(fake.received().count <= 50, "only the first claim's sends reached APNs: \(fake.received().count)")

        // Accepted again at Apple's side; time passes: the probe is delivered and the rest follow.
        fake.refuseKey(nil)
        clock.advance(seconds: 30)
        let delivered = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            clock.advance(seconds: 1)
            return (try? storage.campaign(id: "stopped"))?.counts[.delivered] == 200
        }
        #expect(delivered, "every refused device was delivered in the end")
        let rows = try storage.results(campaign: summary.seq, offset: 0, limit: 500)
        #expect(rows.allSatisfy { $0.attempts == 1 }, "maxAttempts is 1: no refused attempt was counted")
        #expect(tokens.hold() == nil)
    }

    /// One app's key held: its campaign waits, spending nothing, while another app's
    /// campaign is delivered; once the hold ends it goes too.
    @Test func aHeldAppWaitsWhileTheOtherAppsCampaignsGo() async throws {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        func insert(_ id: String, app: String, prefix: String) throws {
            var campaign = NewCampaign(id: id, createdAt: 1, dryRun: false,
                                       message: StoredMessage(pushType: "alert", topic: "com.example.\(app)", priority: 10),
                                       body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
            campaign.app = app
            campaign.environment = "sandbox"
            _ = try storage.insert(campaign, deliveries: (0..<20).map { NewDelivery(token: Fixtures.token(prefix, $0)) }, now: 1)
        }
        // The held app's campaign is the older one: claims would reach it first.
        try insert("news-1", app: "news", prefix: "e")
        try insert("shop-1", app: "shop", prefix: "f")
        let hold = HoldSwitch()
        let sender = ScriptedSender()
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: Metrics(),
                                    heldUntil: { route in route.app == "news" && hold.isOn ? Date().timeIntervalSince1970 + 60 : nil },
                                    options: .init(inFlight: 4, claimBatch: 4, maxAttempts: 1, retryBaseSeconds: 0.01, retryMaxSeconds: 0.05), clock: SystemClock())
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        #expect(await eventually(timeout: .seconds(20)) { (try? storage.campaign(id: "shop-1"))?.counts[.delivered] == 20 })
        try await Task.sleep(nanoseconds: 300_000_000)
        let waiting = try #require(try storage.campaign(id: "news-1"))
        #expect(waiting.counts[.pending] == 20, "the held app's devices stay pending: \(waiting.counts)")
        #expect(!sender.sent.withLock { $0 }.contains { $0.hasPrefix("e") }, "nothing of the held app reached the sender")
        hold.turnOff()
        #expect(await dispatcher.waitUntilIdle(deadlineSeconds: 20))
        #expect(try storage.campaign(id: "news-1")?.counts[.delivered] == 20)
        #expect(try storage.results(campaign: waiting.seq, offset: 0, limit: 100).allSatisfy { $0.attempts == 1 })
    }

    @Test func otherTooManyRequestsAnswersAreRetriedButTheTokenOneIsNot() {
        let storage = try! SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let dispatcher = Dispatcher(storage: storage, sender: ScriptedSender(), dryRunSender: ScriptedSender(), metrics: Metrics(),
                                    heldUntil: { _ in 5000 }, options: .init(maxAttempts: 5), clock: ManualClock(wallSeconds: 1000))
        let claim = ClaimedDelivery(campaign: 1, index: 0, token: "t", body: nil, attempt: 1, lease: 1)
        let busy = dispatcher.outcome(of: .failed(status: 429, reason: .tooManyRequests), for: claim, route: Self.route)
        #expect(busy.state == .retrying && !busy.refundAttempt)
        let held = dispatcher.outcome(of: .transportFailed(TransportFailure(.keyStopped, "key paused")), for: claim, route: Self.route)
        #expect(held.state == .retrying && held.refundAttempt && held.nextAttemptAt == 5000, "back when the key's hold ends")
        let expired = dispatcher.outcome(of: .transportFailed(TransportFailure(.keyStopped, "key paused")),
                                         for: ClaimedDelivery(campaign: 1, index: 0, token: "t", body: nil, attempt: 5, lease: 1), route: Self.route)
        #expect(expired.state == .retrying && expired.refundAttempt, "even on the device's last attempt")
        let final = dispatcher.outcome(of: .failed(status: 429, reason: .unknown("SomethingNew")), for: claim, route: Self.route)
        #expect(final.state == .failed)
    }

    @Test func anUnreachableAPNsCostsTheDeviceNoAttempt() {
        let storage = try! SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let dispatcher = Dispatcher(storage: storage, sender: ScriptedSender(), dryRunSender: ScriptedSender(), metrics: Metrics(),
                                    options: .init(maxAttempts: 2), clock: ManualClock(wallSeconds: 1000))
        // Even on its last attempt: the device stays queued, and the attempt is given back.
        let claim = ClaimedDelivery(campaign: 1, index: 0, token: "t", body: nil, attempt: 2, lease: 1)
        let update = dispatcher.outcome(of: .transportFailed(TransportFailure(.unreachable, "cannot reach APNs at https://x: refused")), for: claim, route: Self.route)
        #expect(update.state == .retrying && update.refundAttempt && update.reason == "unreachable")
        let timeout = dispatcher.outcome(of: .transportFailed(TransportFailure(.timeout, "no answer")), for: claim, route: Self.route)
        #expect(timeout.state == .failed, "a device's own timeout still counts")
    }

    @Test func aNonBlockingCheckIsShownButLeavesTheServiceReady() throws {
        let gateway = try LiveGateway(readiness: [
            ReadinessCheck(name: "apns_sending", blocking: false) { "paused until 2026-12-01T10:00:00.000Z" },
        ])
        let response = try #require(gateway.request("GET", "/readyz"))
        #expect(response.status == 200)
        let body = try gateway.object(response)
        #expect(body["status"] == .string("ready"))
        #expect(body["checks"]?.objectValue?["apns_sending"]?.stringValue?.hasPrefix("paused until") == true)
    }

    @Test func metricsShowHowLongSendsArePaused() {
        let metrics = Metrics()
        #expect(metrics.render().contains("\npushgate_apns_sending_paused_seconds 0\n"))
        metrics.observeSendingPause { 600 }
        #expect(metrics.render().contains("\npushgate_apns_sending_paused_seconds 600\n"))
    }
}

/// A hold a test turns off.
final class HoldSwitch: Sendable {
    private let on = Atomic<Bool>(true)

    var isOn: Bool { on.load(ordering: .relaxed) }
    func turnOff() { on.store(false, ordering: .relaxed) }
}
