import Foundation
import Testing
import Storage

/// A campaign filled in parts, the same on both backends: indices contiguous across parts
/// (a part continues the last partial segment), the start refused when the device count
/// moved since the guard read it, and the lane chosen at the start by the configured limit.
@Suite struct CampaignFillingTests {
    func filling(_ storage: any CampaignStorage, _ id: String, lane: Lane? = nil) throws {
        var campaign = newCampaign(id)
        campaign.filling = true
        campaign.lane = lane
        _ = try storage.insert(campaign, deliveries: [], now: 1000)
    }

    /// Delivered with the derived apns-id: a code in its segment.
    func delivered(_ c: ClaimedDelivery) -> DeliveryUpdate {
        DeliveryUpdate(campaign: c.campaign, index: c.index, state: .delivered, status: 200,
                       apnsID: CampaignMessage.apnsID(prefix: newCampaign("").apnsIDPrefix, index: c.index), lease: c.lease)
    }

    func part(_ storage: any CampaignStorage, _ id: String, _ part: Int, _ devices: Range<Int>) throws -> AppendOutcome {
        try storage.appendDevices(campaign: id, part: part, requestSHA256: "\(id)-\(part)",
                                  deliveries: devices.map { NewDelivery(token: token($0)) }, now: 1001)
    }

    /// The dispatcher's sweeps (stopped campaigns closed, settled ones finished, a claim)
    /// run while a campaign waits for its first part: it has no device yet, and must not be
    /// taken for one with nothing left to send.
    @Test(arguments: Backend.allCases) func anEmptyCampaignWaitingForItsFirstPartIsNotFinishedBySweeps(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        try filling(storage, "empty")
        _ = try storage.closeStopped(now: 1000.5, limit: 100)
        _ = try storage.claim(limit: 10, lease: testLease, now: 1000.5)
        _ = try storage.closeStopped(now: 1000.6, limit: 100)
        #expect(try storage.campaign(id: "empty")?.finishedAt == nil)
        #expect(try part(storage, "empty", 1, 0..<2) == .appended(PartReceipt(part: 1, firstIndex: 0, devices: 2, skipped: 0)))
    }

    @Test(arguments: Backend.allCases) func twoPartsOfThreeInSegmentsOfFourGetIndicesZeroToFive(_ backend: Backend) throws {
        let storage = try freshStorage(backend, segmentSize: 4)
        try filling(storage, "parts")
        #expect(try part(storage, "parts", 1, 0..<3) == .appended(PartReceipt(part: 1, firstIndex: 0, devices: 3, skipped: 0)))
        let seq = try #require(try storage.campaign(id: "parts")).seq
        // Read between the parts: a decoded copy of the partial segment must not outlive it.
        #expect(try storage.results(campaign: seq, states: nil, offset: 0, limit: 10).map(\.index) == [0, 1, 2])
        #expect(try part(storage, "parts", 2, 3..<6) == .appended(PartReceipt(part: 2, firstIndex: 3, devices: 3, skipped: 0)))
        #expect(try part(storage, "parts", 2, 3..<6) == .alreadyAppended(PartReceipt(part: 2, firstIndex: 3, devices: 3, skipped: 0)))
        let rows = try storage.results(campaign: seq, states: nil, offset: 0, limit: 10)
        #expect(rows.map(\.index) == Array(0..<6) && rows.map(\.token) == (0..<6).map(token))
        #expect(rows.allSatisfy { $0.state == .pending })

        guard case .started = try storage.finishFilling(campaign: "parts", expectedDevices: 6, transactionalMaxDevices: 100, now: 1002) else {
            Issue.record("not started")
            return
        }
        var claimed: [ClaimedDelivery] = []
        for _ in 0..<10 {
            let claims = try storage.claim(limit: 100, now: 1003)
            if claims.isEmpty { break }
            claimed += claims
        }
        #expect(claimed.map(\.index).sorted() == Array(0..<6))
        #expect(claimed.sorted { $0.index < $1.index }.map(\.token) == (0..<6).map(token))
        try storage.record(claimed.map(delivered), now: 1004)
        let summary = try #require(try storage.campaign(id: "parts"))
        #expect(summary.counts.filter { $0.value != 0 } == [.delivered: 6])
        #expect(summary.finishedAt == 1004 && summary.failure == nil)
        #expect(try storage.results(campaign: seq, states: nil, offset: 0, limit: 10).map(\.token) == (0..<6).map(token))
    }

    /// The race made deterministic: the guard reads 3 devices, a part is stored, then the
    /// start with the count read is refused and nothing is sendable.
    @Test(arguments: Backend.allCases) func aStartWithACountThatMovedIsRefusedAndStartsNothing(_ backend: Backend) throws {
        let storage = try freshStorage(backend, segmentSize: 4)
        try filling(storage, "race")
        _ = try part(storage, "race", 1, 0..<3)
        let read = try #require(try storage.campaign(id: "race")).devices
        _ = try part(storage, "race", 2, 3..<8)
        guard case .devicesChanged(let now) = try storage.finishFilling(campaign: "race", expectedDevices: read,
                                                                        transactionalMaxDevices: 100, now: 1002) else {
            Issue.record("started with a count nobody confirmed")
            return
        }
        #expect(read == 3 && now.devices == 8 && now.filling)
        #expect(try storage.campaign(id: "race")?.filling == true)
        #expect(try storage.claim(limit: 100, now: 1003).isEmpty, "nothing sendable")
        // It still takes parts, and starts with the count it has.
        _ = try part(storage, "race", 3, 8..<9)
        guard case .started(let started) = try storage.finishFilling(campaign: "race", expectedDevices: 9,
                                                                      transactionalMaxDevices: 100, now: 1004) else {
            Issue.record("not started with its own count")
            return
        }
        #expect(started.devices == 9 && !started.filling)
        // Started: a start again is answered as it is, whatever count it names.
        guard case .unchanged = try storage.finishFilling(campaign: "race", expectedDevices: 3, transactionalMaxDevices: 100, now: 1005) else {
            Issue.record("a started campaign answered otherwise")
            return
        }
    }

    @Test(arguments: Backend.allCases) func theLaneAtTheStartFollowsTheConfiguredLimit(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        for (id, limit) in [("small-limit", 4), ("large-limit", 200)] {
            try filling(storage, id)
            _ = try part(storage, id, 1, 0..<150)
            guard case .started(let started) = try storage.finishFilling(campaign: id, expectedDevices: 150,
                                                                          transactionalMaxDevices: limit, now: 1002) else {
                Issue.record("\(id) not started")
                continue
            }
            #expect(started.lane == (limit >= 150 ? .transactional : .bulk), "\(id)")
            #expect(try storage.campaign(id: id)?.lane == started.lane)
        }
        // A lane named at creation stays.
        try filling(storage, "named", lane: .bulk)
        _ = try part(storage, "named", 1, 0..<2)
        guard case .started(let named) = try storage.finishFilling(campaign: "named", expectedDevices: 2,
                                                                    transactionalMaxDevices: 100, now: 1002) else {
            Issue.record("named not started")
            return
        }
        #expect(named.lane == .bulk)
    }

    @Test(arguments: Backend.allCases) func aCampaignCancelledWhileFillingTakesNoPartAndNeverStarts(_ backend: Backend) throws {
        let storage = try freshStorage(backend, segmentSize: 4)
        try filling(storage, "cancelled")
        _ = try part(storage, "cancelled", 1, 0..<3)
        #expect(try storage.changeLifecycle(id: "cancelled", .cancel, now: 1002).isChanged)
        for attempt in [{ _ = try part(storage, "cancelled", 2, 3..<5) },
                        { _ = try storage.finishFilling(campaign: "cancelled", expectedDevices: 3, transactionalMaxDevices: 100, now: 1003) }] {
            do {
                try attempt()
                Issue.record("a cancelled campaign is neither filled nor started")
            } catch let error as StorageError { #expect(error.code == .notFilling) }
        }
        #expect(try storage.campaign(id: "cancelled")?.devices == 3)
        #expect(try storage.claim(limit: 10, now: 1004).isEmpty)
    }
}
