import Foundation
import Storage
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox
@testable import Storage

/// A claim that commits after its lease ran out (the process was frozen, the database
/// answered that late) is not sent from: another instance may already hold those devices.
/// They are taken over once the lease is seen to have expired and sent then, once each.
@Suite struct LateClaimTests {
    @Test func aClaimThatReturnsAfterItsLeaseIsNotSentFromAndItsDevicesGoOutOnceLater() async throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        // Within the dispatcher's longest idle wait (1 s): its next look is at the start itself.
        let startsAt = SystemClock().wallSeconds() + 0.9
        var campaign = NewCampaign(id: "late-claim", createdAt: 1, dryRun: false,
                                   message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        campaign.sendAt = startsAt
        let tokens = (0..<20).map { Fixtures.token("a", $0) }
        _ = try storage.insert(campaign, deliveries: tokens.map { NewDelivery(token: $0) }, now: SystemClock().wallSeconds())
        let sender = ScriptedSender()
        let metrics = Metrics()
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: metrics,
                                    options: .init(inFlight: 50, claimBatch: 50, maxAttempts: 1,
                                                   lease: LeaseTerms(owner: "late/1/0", seconds: 1)))
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        // Another connection holds the write lock from before the campaign is due until well
        // after a 1 s lease (within the 5 s busy timeout): the first claim waits and commits late.
        // Taken once the dispatcher's first look (nothing due yet) is over.
        try await Task.sleep(nanoseconds: 400_000_000)
        let blocker = try SQLiteDatabase(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        #expect(SystemClock().wallSeconds() < startsAt, "the machine took too long to start the dispatcher")
        while SystemClock().wallSeconds() < startsAt + 2.5 { try await Task.sleep(nanoseconds: 50_000_000) }
        try blocker.execute("COMMIT")
        #expect(await eventually(timeout: .seconds(30)) { (try? storage.campaign(id: "late-claim"))?.counts[.delivered] == 20 })
        #expect(metrics.render().contains("pushgate_claims_past_lease_total 20"))
        #expect(sender.sent.withLock { $0.sorted() } == tokens.sorted())
    }
}
