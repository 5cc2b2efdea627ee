import APNs
import Foundation
import Storage
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox

/// At the stop, the dispatcher starts nothing and the transport starts nothing it holds:
/// against a fake that answers slowly, the devices queued inside the transport come back
/// pending with no attempt spent, and only what was on the wire is sent.
@Suite struct StopGivesBackTests {
    @Test func devicesQueuedInTheTransportAtTheStopAreGivenBackUnsent() throws {
        let fake = try FakeAPNsServer()
        fake.holdAnswers()
        // Two streams on the wire, held by the fake until released (no timing window); the
        // dispatcher's window of 10 puts 8 more in the transport's queue.
        let rig = try DispatchRig(fake: fake, campaign: "slow", devices: 20, tokenPrefix: "5d", streams: 2, inFlight: 10, claimBatch: 10)
        defer { rig.close() }
        let (transport, storage, dispatcher) = (rig.transport, rig.storage, rig.dispatcher)
        // Polled on this thread: a busy cooperative pool cannot make the stop late.
        #expect(eventuallyBlocking(timeout: .seconds(60)) { fake.received().count >= 2 && dispatcher.inFlight == 10 },
                "two on the wire, eight waiting in the transport")
        let onTheWire = fake.received().count
        dispatcher.beginStop()
        transport.stopStartingRequests()
        fake.releaseAnswers()
        #expect(onTheWire == 2)
        #expect(dispatcher.stop(deadlineSeconds: 20), "everything in flight answered or given back before the deadline")
        #expect(fake.received().count == onTheWire, "nothing reached the fake after the stop")
        let summary = try #require(try storage.campaign(id: "slow"))
        #expect(summary.counts[.delivered] == onTheWire && summary.counts[.pending] == 20 - onTheWire
                && summary.counts[.inFlight, default: 0] == 0, "\(summary.counts)")
        let rows = try storage.results(campaign: summary.seq, offset: 0, limit: 20)
        #expect(rows.filter { $0.state == .pending }.allSatisfy { $0.attempts == 0 }, "given back without spending an attempt")
    }
}
