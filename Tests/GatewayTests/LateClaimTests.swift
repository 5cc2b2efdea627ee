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
    @Test func aClaimThatReturnsAfterItsLeaseIsNotSentFromAndItsDevicesGoOutOnceLater() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        // The dispatcher's clock is the test's: the claim's "now" and the moment it returns
        // are set, not raced.
        let clock = ManualClock(wallSeconds: 1000)
        var campaign = NewCampaign(id: "late-claim", createdAt: 1, dryRun: false,
                                   message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        campaign.sendAt = 1000.5
        let tokens = (0..<20).map { Fixtures.token("a", $0) }
        _ = try storage.insert(campaign, deliveries: tokens.map { NewDelivery(token: $0) }, now: 1000)
        let sender = ScriptedSender()
        let metrics = Metrics()
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: metrics,
                                    options: .init(inFlight: 50, claimBatch: 50, maxAttempts: 1,
                                                   lease: LeaseTerms(owner: "late/1/0", seconds: 1)),
                                    clock: clock)
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 1) }
        // Another connection holds the write lock (within the 5 s busy timeout); the campaign
        // becomes due, so the dispatcher's next turn claims at 1000.6 and waits for the lock.
        let blocker = try SQLiteDatabase(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        clock.advance(seconds: 0.6)
        Thread.sleep(forTimeInterval: 2)  // its idle wait is at most 1 s
        // It comes back long after its 1 s lease.
        clock.advance(seconds: 100)
        try blocker.execute("COMMIT")
        #expect(eventuallyBlocking(timeout: .seconds(60)) { (try? storage.campaign(id: "late-claim"))?.counts[.delivered] == 20 })
        #expect(metrics.render().contains("pushgate_claims_past_lease_total 20"))
        #expect(sender.sent.withLock { $0.sorted() } == tokens.sorted())
    }
}
