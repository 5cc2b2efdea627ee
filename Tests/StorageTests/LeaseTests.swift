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

    /// `storage status`: the leases by owner, how many have expired, and what becomes of
    /// them, which is what each backend then does: SQLite gives every lease back at the next
    /// start; PostgreSQL gives nothing back, and another instance takes over only the
    /// expired ones.
    @Test(arguments: Backend.allCases) func theStatusCountsExpiredLeasesAndSaysWhatBecomesOfThem(_ backend: Backend) throws {
        let location = try StoreLocation.fresh(backend)
        // Two devices a segment: the second owner claims the campaign's second segment.
        let storage = try location.open(segmentSize: 2)
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
        #expect(try storage.claim(limit: 2, lease: first, now: 1000).count == 2)  // until 1030
        #expect(try storage.claim(limit: 1, lease: second, now: 1020).count == 1)  // until 1050
        let status = try #require(try location.status(now: 1040))
        #expect(status.leases.map(\.owner) == [first.owner, second.owner])
        #expect(status.leases.map(\.deliveries) == [2, 1])
        #expect(status.leases.map(\.expired) == [2, 0])
        #expect(status.queueDepth == 3)
        switch backend {
        case .sqlite:
            #expect(status.recovery == .givenBackAtStart)
            #expect(try storage.requeueInFlight() == 3)
            #expect(try location.status(now: 1040)?.leases == [])
        case .postgres:
            #expect(status.recovery == .takenOverWhenExpired)
            #expect(try storage.requeueInFlight() == 0, "nothing is given back at start")
            let third = LeaseTerms(owner: "gw-3/300/1040.0", seconds: 30)
            #expect(try location.open(instance: "gw-3").claim(limit: 10, lease: third, now: 1040).map(\.index) == [0, 1])
            #expect(try location.status(now: 1040)?.leases.map(\.owner) == [second.owner, third.owner])
        }
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
