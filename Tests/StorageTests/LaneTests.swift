import Testing
@testable import Storage

/// Fair claims: the transactional lane first with a share kept for bulk, round-robin by
/// campaign within a lane, due retries when due, and the per-campaign rate cap.
@Suite struct LaneTests {
    func insert(_ storage: any CampaignStorage, _ id: String, devices: Int, lane: Lane? = nil, rate: Double? = nil,
                now: Double = 1000) throws {
        var campaign = newCampaign(id)
        campaign.lane = lane
        campaign.ratePerSecond = rate
        _ = try storage.insert(campaign, deliveries: (0..<devices).map { NewDelivery(token: token($0)) },
                               now: now)
    }

    /// Segments of 10 devices: another owner can claim a campaign's next segment while one is held.
    func storage(_ backend: Backend) throws -> any CampaignStorage {
        try freshStorage(backend, synchronousFull: false, segmentSize: 10)
    }

    func seq(_ storage: any CampaignStorage, _ id: String) throws -> Int64 {
        try #require(try storage.campaign(id: id)).seq
    }

    @Test(arguments: Backend.allCases) func theLaneIsChosenBySizeUnlessNamed(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "small", devices: 100)
        try insert(storage, "big", devices: 101)
        try insert(storage, "named", devices: 3, lane: .bulk, rate: 2.5)
        #expect(try storage.campaign(id: "small")?.lane == .transactional)
        #expect(try storage.campaign(id: "big")?.lane == .bulk)
        let named = try #require(try storage.campaign(id: "named"))
        #expect(named.lane == .bulk && named.ratePerSecond == 2.5)
    }

    @Test(arguments: Backend.allCases) func aSmallCampaignBehindABigOneGoesInTheFirstClaim(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "blast", devices: 1000)
        try insert(storage, "code", devices: 2)
        let claims = try storage.claim(limit: 50, now: 1000)
        let code = try seq(storage, "code")
        #expect(claims.count == 50)
        #expect(claims.filter { $0.campaign == code }.count == 2, "both transactional devices in the first claim")
    }

    @Test(arguments: Backend.allCases) func bulkKeepsItsShareWhileBothLanesWait(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "blast", devices: 1000)
        try insert(storage, "busy", devices: 1000, lane: .transactional)
        let blast = try seq(storage, "blast")
        let claims = try storage.claim(limit: 100, now: 1000)
        #expect(claims.count == 100)
        #expect(claims.filter { $0.campaign == blast }.count == 25, "a quarter of the claim for bulk")
        // With the transactional lane idle, bulk takes everything.
        let alone = try self.storage(backend)
        try insert(alone, "blast", devices: 1000)
        #expect(try alone.claim(limit: 100, now: 1000).count == 100)
    }

    @Test(arguments: Backend.allCases) func campaignsOfALaneShareRoundRobin(_ backend: Backend) throws {
        let storage = try storage(backend)
        for id in ["a", "b", "c"] { try insert(storage, id, devices: 200, lane: .bulk) }
        let seqs = try ["a", "b", "c"].map { try seq(storage, $0) }
        let even = try storage.claim(limit: 30, now: 1000)
        #expect(seqs.map { s in even.filter { $0.campaign == s }.count } == [10, 10, 10])
        // Smaller claims than campaigns: each turn serves the ones served longest ago.
        var served: [Int64] = []
        for _ in 0..<3 { served += try storage.claim(limit: 1, now: 1000).map(\.campaign) }
        #expect(Set(served) == Set(seqs), "three one-device claims reach three campaigns, not the oldest three times")
        // What one campaign cannot use goes to the others.
        try insert(storage, "d", devices: 2, lane: .bulk)
        let d = try seq(storage, "d")
        let spill = try storage.claim(limit: 40, now: 1000)
        #expect(spill.count == 40 && spill.filter { $0.campaign == d }.count == 2)
    }

    @Test(arguments: Backend.allCases) func aDueRetryIsClaimedBeforePendingDevices(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "one", devices: 500)
        let first = try storage.claim(limit: 1, now: 1000)
        try storage.record([DeliveryUpdate(campaign: first[0].campaign, index: first[0].index, state: .retrying, status: 503,
                                           nextAttemptAt: 1001, lease: first[0].lease)], now: 1000)
        let early = try storage.claim(limit: 1, now: 1000.5)
        #expect(early.first?.index == 1, "not due yet: the next pending device")
        let due = try storage.claim(limit: 1, now: 1001)
        #expect(due.first?.index == first[0].index && due.first?.attempt == 2, "due: claimed before 497 pending devices")
    }

    @Test(arguments: Backend.allCases) func theRateCapLimitsClaimsAcrossTurns(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "slow", devices: 100, rate: 10)
        #expect(try storage.claim(limit: 100, now: 1000).count == 10, "at most one second's worth at once")
        #expect(try storage.claim(limit: 100, now: 1000).isEmpty)
        let due = try #require(try storage.nextDueTime(now: 1000))
        #expect(abs(due - 1000.1) < 1e-6, "the next send is due when the bucket allows one")
        #expect(try storage.claim(limit: 100, now: 1000.5).count == 5)
        // Idle for a while (within the lease): still at most one second's worth.
        #expect(try storage.claim(limit: 100, now: 1020).count == 10)
        // Another campaign is not held back by the capped one.
        try insert(storage, "free", devices: 50, now: 1020)
        #expect(try storage.claim(limit: 100, now: 1020).count == 50)
    }

    @Test(arguments: Backend.allCases) func takingOverExpiredLeasesCountsAgainstTheRate(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "slow", devices: 100, rate: 10)
        let seq = try seq(storage, "slow")
        let lost = try storage.claim(limit: 100, now: 1000)
        #expect(lost.count == 10)
        // The claimer died; its 10 leases (30 s) have expired. The bucket holds one second
        // of sends: the 10 takeovers are that second's, nothing more.
        let taken = try storage.claim(limit: 100, lease: LeaseTerms(owner: "other/2/0", seconds: 30), now: 1031)
        #expect(taken.count == 10, "takeovers are sends: at most the rate's one second")
        #expect(Set(taken.map(\.index)) == Set(lost.map(\.index)) && taken.allSatisfy { $0.campaign == seq && $0.attempt == 2 })
        #expect(try storage.claim(limit: 100, now: 1031).isEmpty, "the bucket is spent")
        // Half a second later, half a second's worth: of the pending devices.
        let next = try storage.claim(limit: 100, now: 1031.5)
        #expect(next.count == 5 && next.allSatisfy { $0.attempt == 1 })
        // Expired leases of a capped campaign beyond its bucket wait for the next turn.
        let more = try storage.claim(limit: 100, lease: LeaseTerms(owner: "third/3/0", seconds: 30), now: 1062)
        #expect(more.count == 10 && more.allSatisfy { $0.attempt >= 2 }, "15 expired, 10 allowed: \(more.count)")
        #expect(try storage.claim(limit: 100, lease: LeaseTerms(owner: "third/3/0", seconds: 30), now: 1062.5).count == 5)
    }
}
