import Foundation
import Testing
@testable import Storage

/// Leases with fencing, time given by hand (the injected clock is each call's `now`).
@Suite struct LeaseTests {
    let first = LeaseTerms(owner: "gw-1/100/1000.0", seconds: 30)
    let second = LeaseTerms(owner: "gw-2/200/1000.0", seconds: 30)

    func storageWithOneDevice(_ backend: Backend = .sqlite) throws -> (any CampaignStorage, Int64) {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1))], now: 1000)
        return (storage, try #require(try storage.campaign(id: "c1")).seq)
    }

    @Test(arguments: Backend.allCases) func anExpiredLeaseIsTakenOverAndOnlyTheTakerRecordsOnce(_ backend: Backend) throws {
        let (storage, seq) = try storageWithOneDevice(backend)
        let mine = try #require(try storage.claim(limit: 10, lease: first, now: 1000).first)
        #expect(mine.lease == 1)
        // Still leased: nobody else gets it.
        #expect(try storage.claim(limit: 10, lease: second, now: 1029).isEmpty)
        // Expired (the first instance hung): taken over, with the next fencing number.
        let taken = try #require(try storage.claim(limit: 10, lease: second, now: 1031).first)
        #expect(taken.lease == 2 && taken.index == mine.index && taken.attempt == 2)
        #expect(try storage.campaign(id: "c1")?.counts[.inFlight] == 1, "a takeover moves nothing between states")

        // The lost lease's late answer records nothing.
        let late = DeliveryUpdate(campaign: seq, index: 0, state: .failed, status: 400, reason: "BadDeviceToken", lease: mine.lease)
        #expect(try storage.record([late], now: 1032) == 0)
        let current = DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: "id", lease: taken.lease)
        #expect(try storage.record([current], now: 1033) == 1)
        #expect(try storage.record([current], now: 1034) == 0, "a duplicate counts once")
        let summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.counts[.delivered] == 1 && summary.counts[.failed, default: 0] == 0 && summary.counts[.inFlight, default: 0] == 0)
        #expect(summary.finishedAt == 1033)
        #expect(try storage.results(campaign: seq, offset: 0, limit: 1)[0].apnsID == "id")
    }

    @Test(arguments: Backend.allCases) func aRenewedLeaseIsNotTakenOverAndOnlyItsOwnerRenews(_ backend: Backend) throws {
        let (storage, _) = try storageWithOneDevice(backend)
        _ = try storage.claim(limit: 10, lease: first, now: 1000)
        #expect(try storage.renewLeases(second, now: 1020) == 0, "not the owner")
        #expect(try storage.renewLeases(first, now: 1020) == 1)
        #expect(try storage.claim(limit: 10, lease: second, now: 1045).isEmpty, "renewed until 1050")
        #expect(try storage.claim(limit: 10, lease: second, now: 1050).count == 1)
        #expect(try storage.renewLeases(first, now: 1051) == 0, "lost: no longer renewable")
    }

    @Test func anExclusiveOwnerGivesBackItsDeadPredecessorsLeasesAtStart() throws {
        let (storage, seq) = try storageWithOneDevice()
        let old = try #require(try storage.claim(limit: 10, lease: first, now: 1000).first)
        #expect(try storage.requeueInFlight() == 1)
        let again = try #require(try storage.claim(limit: 10, lease: second, now: 1001).first)
        #expect(again.lease > old.lease)
        #expect(try storage.record([DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, lease: old.lease)], now: 1002) == 0)
    }
}
