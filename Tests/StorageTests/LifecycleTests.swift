import Foundation
import TestSupport
import Testing
@testable import Storage

/// The campaign lifecycle and retention in the storage contract: schedule, expiry,
/// pause, resume, cancel, `campaign.finished` events, purges and page reuse.
@Suite struct LifecycleTests {
    func storage(_ backend: Backend) throws -> any CampaignStorage {
        try freshStorage(backend, synchronousFull: false)
    }

    @discardableResult
    func insert(_ storage: any CampaignStorage, _ id: String, devices: Int, sendAt: Double? = nil, expiresAt: Double? = nil,
                now: Double = 1000) throws -> Int64 {
        var campaign = newCampaign(id)
        campaign.sendAt = sendAt
        campaign.expiresAt = expiresAt
        _ = try storage.insert(campaign, deliveries: (0..<devices).map { NewDelivery(token: token($0 + Int(now))) }, now: now)
        return try #require(try storage.campaign(id: id)).seq
    }

    func deliver(_ storage: any CampaignStorage, _ claims: [ClaimedDelivery], now: Double) throws {
        try storage.record(claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) }, now: now)
    }

    @Test(arguments: Backend.allCases) func aScheduledCampaignIsNotClaimedBeforeItsTime(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "s1", devices: 3, sendAt: 2000)
        #expect(try storage.campaign(id: "s1")?.status(at: 1500) == .scheduled)
        #expect(try storage.claim(limit: 10, now: 1999).isEmpty)
        #expect(try storage.nextDueTime(now: 1500) == 2000)
        let claimed = try storage.claim(limit: 10, now: 2000)
        #expect(claimed.count == 3)
        #expect(try storage.campaign(id: "s1")?.status(at: 2000) == .sending)
    }

    @Test(arguments: Backend.allCases) func pauseStopsClaimsAndResumeGivesThemBackTwiceIsUnchanged(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "p1", devices: 4)
        guard case .changed(let paused) = try storage.changeLifecycle(id: "p1", .pause, now: 1001) else { Issue.record("not paused"); return }
        #expect(paused.status(at: 1001) == .paused)
        guard case .unchanged = try storage.changeLifecycle(id: "p1", .pause, now: 1002) else { Issue.record("pausing twice changed something"); return }
        #expect(try storage.claim(limit: 10, now: 1003).isEmpty)
        guard case .changed = try storage.changeLifecycle(id: "p1", .resume, now: 1004) else { Issue.record("not resumed"); return }
        guard case .unchanged = try storage.changeLifecycle(id: "p1", .resume, now: 1004) else { Issue.record("resuming twice changed something"); return }
        #expect(try storage.claim(limit: 10, now: 1005).count == 4)
        #expect(try storage.changeLifecycle(id: "nope", .pause, now: 1005) == .notFound)
    }

    @Test(arguments: Backend.allCases) func cancelStopsNewSendsAtOnceWhatIsInFlightFinishesAndTheRestIsCounted(_ backend: Backend) throws {
        let storage = try storage(backend)
        let seq = try insert(storage, "c1", devices: 10)
        let first = try storage.claim(limit: 3, now: 1001)
        guard case .changed(let cancelled) = try storage.changeLifecycle(id: "c1", .cancel, now: 1002) else { Issue.record("not cancelled"); return }
        #expect(cancelled.status(at: 1002) == .cancelled)
        #expect(cancelled.notSent(at: 1002) == 7, "pending devices are not sent, even before they are closed")
        #expect(try storage.claim(limit: 10, now: 1003).isEmpty, "nothing new is claimed")
        #expect(try storage.closeStopped(now: 1003, limit: 4) == 4)
        #expect(try storage.closeStopped(now: 1003, limit: 4) == 3)
        #expect(try storage.closeStopped(now: 1003, limit: 4) == 0)
        var summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.counts[.cancelled] == 7 && summary.counts[.inFlight] == 3 && summary.finishedAt == nil)
        // The in-flight window finishes: two delivered, one would retry but ends cancelled.
        try deliver(storage, Array(first.prefix(2)), now: 1004)
        try storage.record([DeliveryUpdate(campaign: seq, index: first[2].index, state: .retrying, status: 503, reason: "ServiceUnavailable",
                                           nextAttemptAt: 1010, lease: first[2].lease)], now: 1004)
        summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.counts[.delivered] == 2 && summary.counts[.cancelled] == 8 && summary.finishedAt == 1004)
        #expect(summary.status(at: 1005) == .cancelled && summary.notSent(at: 1005) == 8)
        #expect(try storage.claim(limit: 10, now: 1020).isEmpty)
        // Cancelling again is a no-op; pausing or resuming a cancelled campaign is refused.
        guard case .unchanged = try storage.changeLifecycle(id: "c1", .cancel, now: 1006) else { Issue.record("cancel twice"); return }
        guard case .refused = try storage.changeLifecycle(id: "c1", .pause, now: 1006) else { Issue.record("paused a cancelled campaign"); return }
        guard case .refused = try storage.changeLifecycle(id: "c1", .resume, now: 1006) else { Issue.record("resumed a cancelled campaign"); return }
        // One campaign.finished event.
        let events = try storage.pendingCampaignEvents(limit: 10)
        #expect(events.map(\.campaign.id) == ["c1"])
        #expect(events.first?.campaign.counts[.cancelled] == 8)
    }

    @Test(arguments: Backend.allCases) func aFinishedCampaignCannotBeCancelledOrPaused(_ backend: Backend) throws {
        let storage = try storage(backend)
        try insert(storage, "f1", devices: 2)
        try deliver(storage, try storage.claim(limit: 10, now: 1001), now: 1002)
        for action in LifecycleAction.allCases {
            guard case .refused(let summary) = try storage.changeLifecycle(id: "f1", action, now: 1003) else {
                Issue.record("\(action) of a completed campaign was not refused")
                continue
            }
            #expect(summary.status(at: 1003) == .completed)
        }
    }

    @Test(arguments: Backend.allCases) func devicesNotSentByExpiresAtEndExpired(_ backend: Backend) throws {
        let storage = try storage(backend)
        let seq = try insert(storage, "e1", devices: 5, expiresAt: 1100)
        // Claimed late enough that the lease (30 s) is still live at the expiry.
        let claims = try storage.claim(limit: 2, now: 1090)
        try deliver(storage, [claims[0]], now: 1091)
        #expect(try storage.campaign(id: "e1")?.status(at: 1099) == .sending)
        #expect(try storage.claim(limit: 10, now: 1100).isEmpty, "nothing is sent late")
        #expect(try storage.campaign(id: "e1")?.status(at: 1100) == .expired)
        #expect(try storage.closeStopped(now: 1100, limit: 100) == 3)
        try storage.record([DeliveryUpdate(campaign: seq, index: claims[1].index, state: .delivered, status: 200, lease: claims[1].lease)], now: 1101)
        let summary = try #require(try storage.campaign(id: "e1"))
        #expect(summary.counts[.expired] == 3 && summary.counts[.delivered] == 2 && summary.finishedAt == 1101)
        #expect(summary.status(at: 1200) == .expired && summary.notSent(at: 1200) == 3)
        guard case .refused = try storage.changeLifecycle(id: "e1", .cancel, now: 1200) else { Issue.record("cancelled an expired campaign"); return }
    }

    @Test(arguments: Backend.allCases) func resultsFilterByState(_ backend: Backend) throws {
        let storage = try storage(backend)
        let seq = try insert(storage, "r1", devices: 6)
        let claims = try storage.claim(limit: 6, now: 1001)
        try storage.record(claims.map {
            $0.index % 2 == 0 ? DeliveryUpdate(campaign: seq, index: $0.index, state: .failed, status: 400, reason: "BadDeviceToken", lease: $0.lease)
                : DeliveryUpdate(campaign: seq, index: $0.index, state: .delivered, status: 200, lease: $0.lease)
        }, now: 1002)
        #expect(try storage.results(campaign: seq, states: [.failed], offset: 0, limit: 10).map(\.index) == [0, 2, 4])
        #expect(try storage.results(campaign: seq, states: [.failed], offset: 1, limit: 1).map(\.index) == [2])
        #expect(try storage.results(campaign: seq, states: [.failed, .delivered], offset: 0, limit: 10).count == 6)
        #expect(try storage.results(campaign: seq, states: [.expired], offset: 0, limit: 10).isEmpty)
    }

    @Test(arguments: Backend.allCases) func reasonsAreCountedByStateMostFirst(_ backend: Backend) throws {
        let storage = try storage(backend)
        let seq = try insert(storage, "q1", devices: 8)
        let other = try insert(storage, "q2", devices: 2)
        let claims = try storage.claim(limit: 10, now: 1001)
        try storage.record(claims.map { claim in
            guard claim.campaign == seq else {
                return DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .failed, status: 400, reason: "BadTopic", lease: claim.lease)
            }
            switch claim.index {
            case 0, 1, 2: return DeliveryUpdate(campaign: seq, index: claim.index, state: .failed, status: 400, reason: "BadDeviceToken", lease: claim.lease)
            case 3: return DeliveryUpdate(campaign: seq, index: claim.index, state: .failed, status: 400, reason: "<b>odd</b>", lease: claim.lease)
            case 4, 5: return DeliveryUpdate(campaign: seq, index: claim.index, state: .unregistered, status: 410, reason: "Unregistered", lease: claim.lease)
            case 6: return DeliveryUpdate(campaign: seq, index: claim.index, state: .retrying, status: 503, reason: "ServiceUnavailable",
                                          nextAttemptAt: 2000, lease: claim.lease)
            default: return DeliveryUpdate(campaign: seq, index: claim.index, state: .delivered, status: 200, lease: claim.lease)
            }
        }, now: 1002)
        let all = try storage.reasonCounts(campaign: seq, states: [.failed, .unregistered, .retrying, .delivered])
        #expect(all == [ReasonCount(state: .failed, reason: "BadDeviceToken", count: 3), ReasonCount(state: .unregistered, reason: "Unregistered", count: 2),
                        ReasonCount(state: .retrying, reason: "ServiceUnavailable", count: 1), ReasonCount(state: .failed, reason: "<b>odd</b>", count: 1)])
        #expect(try storage.reasonCounts(campaign: seq, states: [.unregistered]) == [ReasonCount(state: .unregistered, reason: "Unregistered", count: 2)])
        #expect(try storage.reasonCounts(campaign: seq, states: []).isEmpty)
        #expect(try storage.reasonCounts(campaign: other, states: [.failed]) == [ReasonCount(state: .failed, reason: "BadTopic", count: 2)])
    }

    @Test(arguments: Backend.allCases) func eventBatchesAreFixedOnceFormed(_ backend: Backend) throws {
        let storage = try storage(backend)
        for id in ["a", "b", "c"] {
            try insert(storage, id, devices: 1)
            try deliver(storage, try storage.claim(limit: 1, now: 1001), now: 1002)
        }
        let first = try storage.pendingCampaignEvents(limit: 2)
        #expect(first.map(\.campaign.id) == ["a", "b"])
        try insert(storage, "d", devices: 1)
        try deliver(storage, try storage.claim(limit: 1, now: 1003), now: 1004)
        // Asked again before acknowledging: the same batch, not a bigger one.
        #expect(try storage.pendingCampaignEvents(limit: 10).map(\.seq) == first.map(\.seq))
        try storage.acknowledgeCampaignEvents(through: try #require(first.last).seq)
        #expect(try storage.pendingCampaignEvents(limit: 10).map(\.campaign.id) == ["c", "d"])
    }

    @Test(arguments: Backend.allCases) func retentionPurgesOnlyOldFinishedCampaignsAndKeepsDeadTokens(_ backend: Backend) throws {
        let storage = try storage(backend)
        let old = try insert(storage, "old", devices: 5, now: 1000)
        var key = newCampaign("keyed")
        key.idempotency = IdempotencyClaim(key: "k", requestSHA256: "x", notBefore: 0)
        _ = try storage.insert(key, deliveries: [NewDelivery(token: token(99))], now: 1000)
        let claims = try storage.claim(limit: 10, now: 1001)
        try storage.record(claims.map {
            $0.campaign == old && $0.index == 0
                ? DeliveryUpdate(campaign: $0.campaign, index: 0, state: .unregistered, status: 410, reason: "Unregistered", lease: $0.lease)
                : DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease)
        }, now: 1002)
        try insert(storage, "young", devices: 2, now: 5000)
        try deliver(storage, try storage.claim(limit: 10, now: 5001), now: 5002)
        try insert(storage, "unfinished", devices: 2, now: 900)

        // Cut-off between the two finishes: only the old ones go, two rows at a time.
        var progress = try storage.purgeFinished(before: 3000, limit: 2)
        switch backend {
        case .sqlite: #expect(progress == PurgeProgress(deliveries: 2, campaigns: 0, more: true))
        // A segment goes whole (its 5 devices count toward the limit), its exception rows after.
        case .postgres: #expect(progress == PurgeProgress(deliveries: 5, campaigns: 0, more: true))
        }
        var rounds = 1
        while progress.more && rounds < 20 {
            progress = try storage.purgeFinished(before: 3000, limit: 2)
            rounds += 1
        }
        #expect(try storage.campaign(id: "old") == nil && storage.campaign(id: "keyed") == nil)
        #expect(try storage.campaign(id: "young") != nil && storage.campaign(id: "unfinished") != nil)
        #expect(try storage.idempotencyRecord(key: "k", notBefore: 0) == nil)
        #expect(try storage.results(campaign: old, offset: 0, limit: 10).isEmpty)
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).map(\.token) == [token(1000)], "dead tokens are kept")
        #expect(try storage.pendingCampaignEvents(limit: 10).map(\.campaign.id) == ["young"])
        #expect(try storage.purgeFinished(before: 3000, limit: 2) == PurgeProgress())
    }

    @Test func newFilesUseIncrementalVacuumAndGiveFreedPagesBack() throws {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        try insert(storage, "big", devices: 3000)
        try deliver(storage, try storage.claim(limit: 3000, now: 1001), now: 1002)
        while try storage.purgeFinished(before: 2000, limit: 500).more {}
        let before = try storage.pageStatistics()
        #expect(try storage.reading { db throws(StorageError) in try Migrator.autoVacuum(db) } == 2)
        #expect(before.freePages > 50, "\(before)")
        var given = 0
        while case let n = try storage.reclaimFreePages(maxPages: 64), n > 0 { given += n }
        let after = try storage.pageStatistics()
        #expect(given > 50 && after.freePages == 0 && after.pages < before.pages, "\(given) \(before) \(after)")
    }

    @Test func aVersion4FileIsMigratedToIncrementalVacuum() throws {
        let path = temporaryDatabasePath()
        do {
            let db = try SQLiteDatabase(path: path)
            // As files made before version 5 were: no auto-vacuum.
            try db.execute("PRAGMA auto_vacuum = NONE")
            try db.execute("VACUUM")
            for (i, sql) in Schema.migrations.prefix(4).enumerated() {
                try db.execute(sql)
                try db.execute("PRAGMA user_version = \(i + 1)")
            }
            #expect(try Migrator.autoVacuum(db) == 0)
        }
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        #expect(try storage.schemaVersion() == Schema.currentVersion)
        let check = try SQLiteDatabase(path: path, readOnly: true)
        #expect(try Migrator.autoVacuum(check) == 2)
    }
}
