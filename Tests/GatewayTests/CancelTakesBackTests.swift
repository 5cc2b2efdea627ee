import APNs
import Foundation
import Storage
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox

/// A cancel or pause takes back, before it answers, the campaign's claimed sends that are
/// not on the wire yet: only what was already written reaches APNs after it; cancelled ones
/// end cancelled, paused ones go back to the outbox untouched and are sent once on resume.
@Suite struct CancelTakesBackTests {
    /// Two streams held open by the fake; the dispatcher's window of 10 puts 8 more in the
    /// transport. Returns once that is so.
    static func start(devices: Int = 20) throws -> DispatchRig {
        let fake = try FakeAPNsServer()
        fake.holdAnswers()
        let rig = try DispatchRig(fake: fake, campaign: "held", devices: devices, tokenPrefix: "ca", streams: 2, inFlight: 10, claimBatch: 10)
        #expect(eventuallyBlocking(timeout: .seconds(60)) { fake.received().count >= 2 && rig.dispatcher.inFlight == 10 },
                "two on the wire, eight waiting in the transport")
        return rig
    }

    @Test func aCancelEndsWhatIsNotOnTheWireAndNothingMoreReachesAPNs() throws {
        let s = try Self.start()
        defer { s.close() }
        guard case .changed = try s.campaigns.change("held", .cancel) else { Issue.record("not cancelled"); return }
        let onTheWire = s.fake.received().count
        s.fake.releaseAnswers()
        #expect(onTheWire == 2)
        #expect(eventuallyBlocking(timeout: .seconds(30)) {
            (try? s.storage.campaign(id: "held"))?.counts[.cancelled] == 20 - onTheWire && s.dispatcher.inFlight == 0
        }, "\(String(describing: (try? s.storage.campaign(id: "held"))?.counts))")
        #expect(s.dispatcher.stop(deadlineSeconds: 10))
        #expect(s.fake.received().count == onTheWire, "nothing reached the fake after the cancel")
        let summary = try #require(try s.storage.campaign(id: "held"))
        #expect(summary.counts[.delivered] == onTheWire && summary.counts[.cancelled] == 20 - onTheWire, "\(summary.counts)")
    }

    /// The issue's shape, smaller: a server answering after ~20 ms, 100 streams on one
    /// connection, the dispatcher's window of 800 (so ~700 wait in the transport): after
    /// the cancel returns, at most the 100 streams open at that moment reach the server.
    @Test func afterACancelAtMostTheOpenStreamsReachTheServer() throws {
        let devices = 5_000
        let rig = try DispatchRig(fake: try FakeAPNsServer(scriptJSON: #"{"delayMs": 20}"#), campaign: "big", devices: devices,
                                  tokenPrefix: "cb", streams: 100, inFlight: 800, claimBatch: 500)
        defer { rig.close() }
        let (fake, storage, dispatcher, campaigns) = (rig.fake, rig.storage, rig.dispatcher, rig.campaigns)
        #expect(eventuallyBlocking(timeout: .seconds(60)) { fake.received().count >= 500 && dispatcher.inFlight >= 400 })
        guard case .changed = try campaigns.change("big", .cancel) else { Issue.record("not cancelled"); return }
        let atTheAnswer = fake.received().count
        #expect(eventuallyBlocking(timeout: .seconds(30)) {
            guard dispatcher.inFlight == 0, let counts = (try? storage.campaign(id: "big"))?.counts else { return false }
            return counts[.delivered, default: 0] + counts[.cancelled, default: 0] == devices
        })
        #expect(dispatcher.stop(deadlineSeconds: 10))
        let after = fake.received().count - atTheAnswer
        #expect(after <= 100, "\(after) requests reached the server after the cancel answered")
        let summary = try #require(try storage.campaign(id: "big"))
        #expect(summary.counts[.delivered, default: 0] == fake.received().count, "\(summary.counts)")
        #expect(summary.counts[.delivered, default: 0] + summary.counts[.cancelled, default: 0] == devices, "\(summary.counts)")
    }

    @Test func aPauseGivesBackUntouchedAndAResumeSendsEveryDeviceExactlyOnce() throws {
        let s = try Self.start()
        defer { s.close() }
        guard case .changed = try s.campaigns.change("held", .pause) else { Issue.record("not paused"); return }
        let onTheWire = s.fake.received().count
        s.fake.releaseAnswers()
        #expect(eventuallyBlocking(timeout: .seconds(30)) { s.dispatcher.inFlight == 0 })
        #expect(s.fake.received().count == onTheWire, "nothing reached the fake after the pause")
        let paused = try #require(try s.storage.campaign(id: "held"))
        #expect(paused.counts[.delivered] == onTheWire && paused.counts[.pending] == 20 - onTheWire, "\(paused.counts)")
        let rows = try s.storage.results(campaign: paused.seq, offset: 0, limit: 20)
        #expect(rows.filter { $0.state == .pending }.allSatisfy { $0.attempts == 0 }, "given back without spending an attempt")

        guard case .changed = try s.campaigns.change("held", .resume) else { Issue.record("not resumed"); return }
        #expect(eventuallyBlocking(timeout: .seconds(60)) { (try? s.storage.campaign(id: "held"))?.counts[.delivered] == 20 })
        #expect(s.dispatcher.stop(deadlineSeconds: 10))
        let tokens = s.fake.received().compactMap { $0.string("token") }
        #expect(tokens.count == 20 && Set(tokens).count == 20, "every device sent exactly once: \(tokens.count) sends")
    }
}
