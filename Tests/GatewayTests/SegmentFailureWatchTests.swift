import Synchronization
import Testing
import TestSupport
@testable import Outbox
@testable import PostgresStorage
@testable import Storage
import Timing

/// The watch behind the `segments` readiness check and the corrupt-campaign log line: it
/// reads the storage at most once per poll, logs each campaign once (only those failed
/// since the start), and lists the last hour's.
@Suite struct SegmentFailureWatchTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func append(_ line: String) { all.withLock { $0.append(line) } }
        var value: [String] { all.withLock { $0 } }
    }

    /// Campaign `id` of 8 devices (4 a segment) whose second segment no longer decodes,
    /// failed by a claim at `now`.
    static func failCampaign(_ id: String, path: String, storage: SQLiteCampaignStorage, now: Double) throws {
        _ = try storage.insert(NewCampaign(id: id, createdAt: now, dryRun: false, message: FairLaneTests.message,
                                           body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-"),
                               deliveries: (0..<8).map { NewDelivery(token: Fixtures.token("ab", $0)) }, now: now)
        let seq = try #require(try storage.campaign(id: id)).seq
        let db = try SQLiteDatabase(path: path)
        try db.statement("UPDATE segments SET checksum = checksum + 1 WHERE campaign = ? AND seg = 1").bind(.int(seq)).run()
        _ = try storage.claim(limit: 100, lease: LeaseTerms(owner: "test/1/0", seconds: 30), now: now)
        let failed = try storage.campaign(id: id)
        #expect(failed?.failure != nil && failed?.finishedAt == now)
    }

    @Test func logsEachCampaignOnceAndListsTheLastHour() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false, segmentSize: 4))
        let now = Mutex(10_000.0)
        let lines = Lines()
        try Self.failCampaign("before-start", path: path, storage: storage, now: 9_000)
        let watch = SegmentFailureWatch(storage: storage, startedAt: 9_500, pollSeconds: 1, clock: { now.withLock { $0 } },
                                        log: lines.append)
        #expect(watch.check() == nil, "nothing read yet")
        watch.refresh()
        // Listed (within the hour) but not logged: it failed before this process started.
        #expect(lines.value.isEmpty)
        #expect(watch.check()?.hasPrefix("1 campaign failed in the last hour: a stored segment does not decode: before-start (segment 1 of campaign") == true,
                "\(watch.check() ?? "nil")")

        // Each read reaches back a minute before the previous one: a campaign whose
        // `finished_at` (the finishing clock) is before the last read is still found.
        try Self.failCampaign("late", path: path, storage: storage, now: 9_970)
        try Self.failCampaign("bad", path: path, storage: storage, now: 10_000.2)
        now.withLock { $0 = 10_000.5 }
        watch.refresh()
        #expect(lines.value.isEmpty, "read at most once a second")
        now.withLock { $0 = 10_001 }
        watch.refresh()
        watch.refresh()
        now.withLock { $0 = 10_002 }
        watch.refresh()
        #expect(lines.value.count == 2, "\(lines.value)")
        #expect(lines.value.first?.hasPrefix("pushgate: campaign late failed: segment 1 of campaign") == true)
        #expect(lines.value.last?.hasPrefix("pushgate: campaign bad failed: segment 1 of campaign") == true)
        #expect(lines.value.last?.contains("does not decode: checksum mismatch") == true)
        #expect(watch.check()?.hasPrefix("3 campaigns failed in the last hour: a stored segment does not decode: bad (") == true)

        // An hour later the oldest has left the check; nothing is logged again.
        now.withLock { $0 = 9_000 + SegmentFailureWatch.windowSeconds + 1 }
        watch.refresh()
        #expect(watch.check()?.hasPrefix("2 campaigns failed in the last hour: a stored segment does not decode: bad (") == true)
        now.withLock { $0 = 10_000.2 + SegmentFailureWatch.windowSeconds + 1 }
        watch.refresh()
        #expect(watch.check() == nil)
        #expect(lines.value.count == 2)
    }

    @Test func namesTenAndCountsTheRest() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false, segmentSize: 4))
        for i in 0..<12 { try Self.failCampaign("c\(i)", path: path, storage: storage, now: 1_000 + Double(i)) }
        let lines = Lines()
        let watch = SegmentFailureWatch(storage: storage, startedAt: 0, clock: { 1_100 }, log: lines.append)
        watch.refresh()
        // Logged oldest first, once each.
        #expect(lines.value.map { String($0.split(separator: " ")[2]) } == (0..<12).map { "c\($0)" }, "\(lines.value)")
        let check = try #require(watch.check())
        #expect(check.hasPrefix("12 campaigns failed in the last hour: a stored segment does not decode: c11 (") && check.hasSuffix("; and 2 more"), "\(check)")
        #expect(!check.contains("c1 (") && check.contains("c2 ("))
    }

    /// On PostgreSQL the claim sets the failure and skips the campaign; the dispatcher's
    /// upkeep (`closeStopped`) ends its open devices and so finishes it: then it is listed.
    @Test func onPostgreSQL() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try PostgresCampaignStorage(options: .init(url: url, poolSize: 2, instance: "watch/1/0", clock: SystemClock()))
        _ = try storage.insert(NewCampaign(id: "pg-bad", createdAt: 1_000, dryRun: false, message: FairLaneTests.message,
                                           body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-"),
                               deliveries: (0..<1100).map { NewDelivery(token: Fixtures.token("cd", $0)) }, now: 1_000)
        let seq = try #require(try storage.campaign(id: "pg-bad")).seq
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try db.execute("UPDATE segments SET tokens = substring(tokens FROM 1 FOR 100) WHERE campaign = $1 AND seg = 1", [.int(seq)])
        let lines = Lines()
        let now = Mutex(1_001.0)
        let watch = SegmentFailureWatch(storage: storage, startedAt: 1_000, clock: { now.withLock { $0 } }, log: lines.append)
        var claims = try storage.recordAndClaim([], claimLimit: 3000, lease: LeaseTerms(owner: "watch/1/0", seconds: 30), now: 1_001)
        while !claims.isEmpty {
            let done = claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) }
            claims = try storage.recordAndClaim(done, claimLimit: 3000, lease: LeaseTerms(owner: "watch/1/0", seconds: 30), now: 1_001)
        }
        watch.refresh()
        #expect(watch.check() == nil && lines.value.isEmpty, "failed, not yet finished")
        while try storage.closeStopped(now: 1_002, limit: 500) > 0 {}
        now.withLock { $0 = 1_003 }
        watch.refresh()
        now.withLock { $0 = 1_004 }
        watch.refresh()
        #expect(lines.value.count == 1 && lines.value.first?.contains("pushgate: campaign pg-bad failed: segment 1 of campaign \(seq) does not decode") == true,
                "\(lines.value)")
        #expect(watch.check()?.hasPrefix("1 campaign failed in the last hour: a stored segment does not decode: pg-bad (segment 1 of campaign") == true)
    }
}
