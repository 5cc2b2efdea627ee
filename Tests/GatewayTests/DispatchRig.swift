import APNsCore
import APNs
import Storage
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox
import Crypto
import CurlClient

extension Dispatcher {
    /// Waits until no delivery is queued or in flight, or the deadline passes.
    func waitUntilIdle(deadlineSeconds: Double) async -> Bool {
        let deadline = clock.wallSeconds() + deadlineSeconds
        while true {
            if inFlight == 0, (try? storage.queueDepth()) == 0 { return true }
            // Checked after the look, not before: a waiter resumed late (a busy pool) still
            // sees work that finished meanwhile.
            if clock.wallSeconds() >= deadline { return false }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}

/// One stored campaign sent by a real dispatcher through the real transport to the fake
/// APNs, as `serve` sends it: the rig the stop, cancel and pause tests share.
struct DispatchRig {
    let fake: FakeAPNsServer
    let transport: CurlHTTP2Transport
    let storage: SQLiteCampaignStorage
    let dispatcher: Dispatcher
    let campaigns: DurableCampaigns

    /// Campaign `id` with `devices` tokens (`Fixtures.token(tokenPrefix, i)`), `streams` on
    /// one connection, the dispatcher started with its window of `inFlight`.
    init(fake: FakeAPNsServer, campaign id: String, devices: Int, tokenPrefix: String,
         streams: Int, inFlight: Int, claimBatch: Int) throws {
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNsServer.keyFile), teamId: FakeAPNsServer.teamId,
                                          keyId: FakeAPNsServer.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, connections: 1,
                                                                           maxConcurrentStreams: streams, timeoutMilliseconds: 30_000), clock: SystemClock())
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(maxAttempts: 1), clock: SystemClock())
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let campaign = NewCampaign(id: id, createdAt: SystemClock().wallSeconds(), dryRun: false, message: FairLaneTests.message,
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        _ = try storage.insert(campaign, deliveries: (0..<devices).map { NewDelivery(token: Fixtures.token(tokenPrefix, $0)) },
                               now: SystemClock().wallSeconds())
        let dispatcher = Dispatcher(storage: storage, sender: client, dryRunSender: client, metrics: Metrics(),
                                    options: .init(inFlight: inFlight, claimBatch: claimBatch), clock: SystemClock())
        try dispatcher.start()
        self.fake = fake
        self.transport = transport
        self.storage = storage
        self.dispatcher = dispatcher
        self.campaigns = DurableCampaigns(storage: storage, dispatcher: dispatcher, idempotencyRetentionSeconds: 60, clock: SystemClock())
    }

    func close() {
        fake.stop()
        transport.shutdown()
    }
}
