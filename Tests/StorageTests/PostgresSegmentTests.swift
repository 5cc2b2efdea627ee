import Foundation
import Synchronization
import Testing
import TestSupport
import Timing
@testable import PostgresStorage
@testable import Storage

/// Segmented campaigns on PostgreSQL: what a device's result becomes, fencing, several
/// instances on one campaign, an instance frozen inside its claim, a segment that does not
/// decode, campaigns filled in parts, and the migration of a database main wrote.
@Suite struct PostgresSegmentTests {
    static let prefix = "01234567-89ab-4cde-8f01-"

    func instance(_ url: String, _ name: String, limits: PGSessionLimits = .standard) throws(StorageError) -> PostgresCampaignStorage {
        var options = PostgresCampaignStorage.Options(url: url, poolSize: 2, instance: name, clock: SystemClock())
        options.sessionLimits = limits
        return try PostgresCampaignStorage(options: options)
    }

    func delivered(_ claims: [ClaimedDelivery]) -> [DeliveryUpdate] {
        claims.map {
            DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200,
                           apnsID: CampaignMessage.apnsID(prefix: Self.prefix, index: $0.index), lease: $0.lease)
        }
    }

    func rows(_ db: PGConnection, _ sql: String) throws -> Int64 { try db.execute(sql).int(0, 0) }

    /// The lines `results` gave on main for a campaign with every kind of outcome
    /// (Fixtures/postgres-schema6-expected.txt, written by main's code).
    static func golden() throws -> [String] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let text = try String(contentsOf: folder.appendingPathComponent("postgres-schema6-expected.txt"), encoding: .utf8)
        return text.split(separator: "\n").map(String.init)
    }

    /// The same outcomes as the golden's "done" campaign, on a segmented campaign: the
    /// results read exactly as main's rows did, and only the exceptions have rows.
    @Test func aSegmentedCampaignWithEveryOutcomeReadsAsMainsRows() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        let lease = LeaseTerms(owner: "a/1/0", seconds: 30)
        _ = try storage.insert(newCampaign("done"), deliveries: (0..<6).map { i in
            var d = NewDelivery(token: token(i))
            if i == 5 { d.failureReason = "PayloadTooLarge" }
            return d
        }, now: 1000)
        var claims = try storage.claim(limit: 10, lease: lease, now: 1000)
        #expect(claims.map(\.index) == [0, 1, 2, 3, 4])
        var updates = delivered(claims)
        updates[1].apnsUniqueID = "4c3b1f2e-0000-4000-8000-000000000001"
        updates[2] = DeliveryUpdate(campaign: claims[2].campaign, index: 2, state: .failed, status: 400, reason: "BadDeviceToken", lease: claims[2].lease)
        updates[3] = DeliveryUpdate(campaign: claims[3].campaign, index: 3, state: .unregistered, status: 410, reason: "Unregistered",
                                    timestampMilliseconds: 999_000, lease: claims[3].lease)
        updates[4] = DeliveryUpdate(campaign: claims[4].campaign, index: 4, state: .retrying, status: 503, reason: "ServiceUnavailable",
                                    nextAttemptAt: 1001, lease: claims[4].lease)
        #expect(try storage.record(updates, now: 1000) == 5)
        claims = try storage.claim(limit: 10, lease: lease, now: 1001)
        #expect(claims.map(\.index) == [4] && claims.first?.attempt == 2, "the retry, from its row")
        try storage.record(delivered(claims), now: 1001)
        let summary = try #require(try storage.campaign(id: "done"))
        #expect(summary.finishedAt == 1001)
        var lines = ["done finished=\(summary.finishedAt.map { "\($0)" } ?? "nil") counts=\(summary.counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.name):\($0.value)" }.joined(separator: ","))"]
        for row in try storage.results(campaign: summary.seq, offset: 0, limit: 100) { lines.append("done \(row)") }
        #expect(lines == (try Self.golden()).filter { $0.hasPrefix("done ") })
        // Filtered and paged as before.
        #expect(try storage.results(campaign: summary.seq, states: [.delivered], offset: 1, limit: 1).map(\.index) == [1])
        #expect(try storage.results(campaign: summary.seq, offset: 2, limit: 2).map(\.index) == [2, 3])
        #expect(try storage.reasonCounts(campaign: summary.seq, states: [.failed]).map(\.reason) == ["BadDeviceToken", "PayloadTooLarge"])
        // Delivered with the derived apns-id and nothing else: a code, no row.
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        #expect(try rows(db, "SELECT count(*) FROM deliveries") == 5)
        #expect(try rows(db, "SELECT count(*) FROM segment_state WHERE open") == 0)
        #expect(try db.execute("SELECT codes FROM segment_state").bytes(0, 0) == [1, 255, 255, 255, 255, 255])
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).map(\.token) == [token(3)])
    }

    /// Thousands of devices: a row only for each exception, a few bytes per device.
    @Test func aBigCampaignEndToEndWritesRowsOnlyForItsExceptions() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        let lease = LeaseTerms(owner: "a/1/0", seconds: 30)
        let devices = 5000
        _ = try storage.insert(newCampaign("big"), deliveries: (0..<devices).map { NewDelivery(token: token($0)) }, now: 1000)
        var seen: [Int] = []
        var pending: [DeliveryUpdate] = []
        for _ in 0..<100 {
            let claims = try storage.recordAndClaim(pending, claimLimit: 700, lease: lease, now: 1001)
            seen += claims.map(\.index)
            pending = delivered(claims).map { update in
                var update = update
                if update.index % 1000 == 7 {
                    update.state = .failed
                    update.status = 400
                    update.reason = "BadDeviceToken"
                    update.apnsID = nil
                }
                return update
            }
            if claims.isEmpty { break }
        }
        #expect(seen == Array(0..<devices))
        let summary = try #require(try storage.campaign(id: "big"))
        #expect(summary.counts == [.delivered: devices - 5, .failed: 5] && summary.finishedAt == 1001)
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        #expect(try rows(db, "SELECT count(*) FROM deliveries") == 5)
        #expect(try rows(db, "SELECT count(*) FROM segments") == 5)
        #expect(try storage.results(campaign: summary.seq, states: [.failed], offset: 0, limit: 10).map(\.index) == [7, 1007, 2007, 3007, 4007])
        let page = try storage.results(campaign: summary.seq, offset: 4095, limit: 3)
        #expect(page.map(\.index) == [4095, 4096, 4097] && page.map(\.token) == [token(4095), token(4096), token(4097)])
        #expect(try storage.queueDepth() == 0)
    }

    /// A claim and a record cost a few statements per segment, never one per device: the
    /// same for 500 devices in one segment as for 4,096 in four.
    @Test func aClaimAndARecordCostAFewStatementsPerSegment() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try PostgresCampaignStorage(options: .init(url: url, poolSize: 1, instance: "a", clock: SystemClock()))
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<8192).map { NewDelivery(token: token($0)) }, now: 1000)
        func statements() throws -> Int { try storage.reading { $0.statementCount } }
        func turn(_ limit: Int, _ pending: [DeliveryUpdate]) throws -> (claims: [ClaimedDelivery], claim: Int, record: Int) {
            var before = try statements()
            try storage.record(pending, now: 1001)
            let record = try statements() - before
            before = try statements()
            let claims = try storage.claim(limit: limit, lease: testLease, now: 1001)
            return (claims, try statements() - before, record)
        }
        let small = try turn(500, [])
        let big = try turn(4096, delivered(small.claims))
        let last = try turn(0, delivered(big.claims))
        #expect(small.claims.count == 500 && big.claims.count == 4096)
        // Claim: campaigns, expired rows, due rows (2), segments locked, per segment its
        // decode and its state, the turn, the counts, BEGIN/COMMIT.
        #expect(small.claim <= 14 && big.claim <= 20, "claim: \(small.claim) statements for 500 devices, \(big.claim) for 4096")
        // Record: campaign info, segments locked, per segment its state, counts, BEGIN/COMMIT, finish.
        #expect(big.record <= 10 && last.record <= 14, "record: \(big.record) statements for 500 results, \(last.record) for 4096")
        print("statements per claim: \(small.claim) (500 devices, 1 segment), \(big.claim) (4096 devices, 5 segments); per record: \(big.record) (500 results), \(last.record) (4096 results)")
    }

    /// Up to four rows as values, each a parameter; more as arrays unnested.
    @Test func rowsAreValuesUpToFourThenArrays() {
        let two = PGArray.rows([[7, 1], [7, 2]], types: ["bigint", "int"], from: 1)
        #expect(two.sql == "(($1::bigint, $2::int), ($3::bigint, $4::int))")
        let integers: [Int64] = two.values.compactMap { value in
            guard case .int(let n) = value else { return nil }
            return n
        }
        #expect(integers == [7, 1, 7, 2] && two.values.count == 4)
        let one = PGArray.rows([[9]], types: ["bigint"], from: 2)
        #expect(one.sql == "(($2::bigint))")
        let five = PGArray.rows((1...5).map { [Int64($0), 0] }, types: ["bigint", "int"], from: 1)
        #expect(five.sql == "(SELECT * FROM unnest($1::bigint[], $2::int[]))")
        let arrays: [String] = five.values.compactMap { value in
            guard case .text(let text) = value else { return nil }
            return text
        }
        #expect(arrays == ["{1,2,3,4,5}", "{0,0,0,0,0}"] && five.values.count == 2)
    }

    /// One turn over six campaigns of three segments each: the claim's turn update and the
    /// record's locked read take their array forms, and every device records once.
    @Test func aTurnOverManyCampaignsAndSegmentsRecordsEveryDevice() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        for c in 0..<6 {
            _ = try storage.insert(newCampaign("c\(c)"), deliveries: (0..<3000).map { NewDelivery(token: token(c * 10_000 + $0)) }, now: 1000)
        }
        let claims = try storage.claim(limit: 18_000, lease: testLease, now: 1001)
        #expect(claims.count == 18_000 && Set(claims.map(\.campaign)).count == 6, "one turn over every campaign")
        #expect(try storage.record(delivered(claims), now: 1002) == 18_000)
        for c in 0..<6 {
            let summary = try #require(try storage.campaign(id: "c\(c)"))
            #expect(summary.finishedAt != nil, "c\(c) finished")
        }
    }

    /// A lease that expires while its holder still sends: another instance takes the segment
    /// over (fencing number + 1, the in-flight devices again, attempt 2); what the late
    /// holder records afterwards changes nothing, before or after the new holder's results.
    @Test func aLateHolderRecordsNothingAfterATakeover() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let a = try instance(url, "a")
        let b = try instance(url, "b")
        _ = try a.insert(newCampaign("c1"), deliveries: (0..<10).map { NewDelivery(token: token($0)) }, now: 1000)
        let old = try a.claim(limit: 4, lease: LeaseTerms(owner: "a", seconds: 5), now: 1000)
        #expect(old.map(\.index) == [0, 1, 2, 3])
        #expect(try b.claim(limit: 10, lease: LeaseTerms(owner: "b", seconds: 5), now: 1002).isEmpty, "the segment is a's until 1005")
        let taken = try b.claim(limit: 10, lease: LeaseTerms(owner: "b", seconds: 30), now: 1006)
        #expect(taken.map(\.index) == Array(0..<10))
        #expect(taken.prefix(4).allSatisfy { $0.attempt == 2 } && taken.dropFirst(4).allSatisfy { $0.attempt == 1 })
        #expect(taken.allSatisfy { $0.lease == old[0].lease + 1 })
        #expect(try a.record(delivered(old), now: 1007) == 0, "a late answer before the new holder's")
        var failedOld = old.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .failed, status: 400, reason: "BadDeviceToken", lease: $0.lease) }
        #expect(try a.record(failedOld, now: 1007) == 0)
        #expect(try b.record(delivered(taken), now: 1008) == 10)
        failedOld[0].state = .retrying
        #expect(try a.record(failedOld, now: 1009) == 0, "a late answer after the new holder's")
        let summary = try #require(try b.campaign(id: "c1"))
        #expect(summary.counts == [.delivered: 10] && summary.finishedAt == 1008)
        #expect(try a.renewLeases(LeaseTerms(owner: "a", seconds: 30), now: 1009) == 0)
    }

    /// Two instances (two storages, two names, one database) claiming one campaign at once:
    /// every device exactly once, no device handed to both, the campaign finished once.
    @Test func twoInstancesOnOneSegmentedCampaignClaimEachDeviceOnce() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let instances = [try instance(url, "a"), try instance(url, "b")]
        let devices = 10 * SegmentLayout.devicesPerSegment + 17
        _ = try instances[0].insert(newCampaign("c1"), deliveries: (0..<devices).map { NewDelivery(token: token($0)) }, now: 1000)
        let seen = Mutex<[String: [Int]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            let lease = LeaseTerms(owner: "gw-\(i)", seconds: 30)
            var pending: [DeliveryUpdate] = []
            do throws(StorageError) {
                for _ in 0..<1000 {
                    let claims = try instances[i].recordAndClaim(pending, claimLimit: 300, lease: lease, now: 1001)
                    pending = delivered(claims)
                    seen.withLock { $0[lease.owner, default: []].append(contentsOf: claims.map(\.index)) }
                    if claims.isEmpty { break }
                }
            } catch {
                failures.withLock { $0.append(error.description) }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let byOwner = seen.withLock { $0 }
        let all = byOwner.values.flatMap { $0 }
        #expect(all.count == devices && Set(all).count == devices, "every device claimed exactly once")
        #expect(Set(byOwner["gw-0"] ?? []).isDisjoint(with: byOwner["gw-1"] ?? []))
        let summary = try #require(try instances[1].campaign(id: "c1"))
        #expect(summary.counts == [.delivered: devices] && summary.finishedAt == 1001)
        #expect(try instances[0].pendingCampaignEvents(limit: 10).map(\.campaign.id) == ["c1"])
    }

    /// An instance frozen inside its claim transaction (here a connection that took the
    /// claim's locks — a capped campaign's row and a segment — and then stops answering)
    /// stops nobody: another instance goes on claiming and finishing the other segments and
    /// the other campaigns; the server ends the frozen transaction after
    /// `idle_in_transaction_session_timeout`, and the segment it had locked is claimed too.
    /// When the frozen instance comes back, its transaction is gone: it commits nothing.
    @Test func anInstanceFrozenInsideItsClaimStopsNobody() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let limits = PGSessionLimits(statementTimeoutMilliseconds: 2000, lockTimeoutMilliseconds: 500, idleInTransactionMilliseconds: 1000,
                                     keepalivesIdleSeconds: 1, keepalivesIntervalSeconds: 1, keepalivesCount: 3, tcpUserTimeoutMilliseconds: 2000)
        let live = try instance(url, "live", limits: limits)
        _ = try live.insert(newCampaign("big"), deliveries: (0..<3000).map { NewDelivery(token: token($0)) }, now: 1000)
        var capped = newCampaign("capped")
        capped.ratePerSecond = 1000
        _ = try live.insert(capped, deliveries: (5000..<5010).map { NewDelivery(token: token($0)) }, now: 1000)
        _ = try live.insert(newCampaign("small"), deliveries: (6000..<6005).map { NewDelivery(token: token($0)) }, now: 1000)
        let big = try #require(try live.campaign(id: "big")).seq
        // Frozen: inside its claim, holding the locks a claim takes, never coming back.
        let frozen = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5, limits: limits)
        try frozen.execute("BEGIN")
        try frozen.execute("SELECT seq FROM campaigns WHERE rate_per_second > 0 FOR UPDATE SKIP LOCKED")
        try frozen.execute("SELECT seg FROM segment_state WHERE campaign = $1 AND seg = 0 FOR UPDATE SKIP LOCKED", [.int(big)])
        let frozenPID = try frozen.execute("SELECT pg_backend_pid()").int(0, 0)
        // The live instance claims and records meanwhile: everything but segment 0 and the capped campaign.
        let lease = LeaseTerms(owner: "live", seconds: 30)
        var seen: [Int64: [Int]] = [:]
        var pending: [DeliveryUpdate] = []
        let started = Date()
        for _ in 0..<50 {
            let claims = try live.recordAndClaim(pending, claimLimit: 500, lease: lease, now: 1001)
            pending = delivered(claims)
            for claim in claims { seen[claim.campaign, default: []].append(claim.index) }
            if claims.isEmpty { break }
        }
        #expect(Date().timeIntervalSince(started) < 1, "the live instance never waited for the frozen one")
        #expect(Set(seen[big] ?? []) == Set(1024..<3000))
        #expect(try live.campaign(id: "small")?.finishedAt == 1001, "another campaign finished meanwhile")
        #expect(try live.campaign(id: "capped")?.counts[.pending] == 10, "the capped campaign whose row it holds waits")
        // The server ends the frozen session once it has sat idle in its transaction too long.
        let watcher = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        var gone = false
        for _ in 0..<100 where !gone {
            usleep(100_000)
            gone = try watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.int(frozenPID)]).int(0, 0) == 0
        }
        #expect(gone, "idle_in_transaction_session_timeout ended the frozen session")
        // What it had locked is claimed now; the frozen instance, back, commits nothing.
        var rest: [ClaimedDelivery] = []
        for _ in 0..<10 {
            let claims = try live.recordAndClaim(pending, claimLimit: 2000, lease: lease, now: 1002)
            pending = delivered(claims)
            rest += claims
            if claims.isEmpty { break }
        }
        #expect(Set(rest.filter { $0.campaign == big }.map(\.index)) == Set(0..<1024))
        #expect(rest.filter { $0.campaign != big }.count == 10, "the capped campaign's devices")
        #expect(throws: StorageError.self) { try frozen.execute("UPDATE segment_state SET lease = lease + 100") }
        #expect(!frozen.isHealthy, "the pool would drop it and connect again")
        #expect(try live.campaign(id: "big")?.counts == [.delivered: 3000])
    }

    /// The pool's connections carry the session limits; a connection the server ended is
    /// replaced on its next use.
    @Test func everyConnectionHasTheSessionLimitsAndOneTheServerEndedIsReplaced() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a", limits: .forLease(seconds: 30))
        try storage.reading { db throws(StorageError) in
            #expect(try db.execute("SHOW statement_timeout").text(0, 0) == "10s")
            #expect(try db.execute("SHOW lock_timeout").text(0, 0) == "5s")
            #expect(try db.execute("SHOW idle_in_transaction_session_timeout").text(0, 0) == "5s")
        }
        // Both pooled connections ended by the server: the next calls still work.
        let admin = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pushgate' AND datname = current_database() AND pid <> pg_backend_pid()")
        var answered = 0
        for _ in 0..<4 {
            if (try? storage.queueDepth()) != nil { answered += 1 }
        }
        #expect(answered >= 2, "after at most one failed call per broken connection, new connections answer")
        #expect(try storage.queueDepth() == 0)
    }

    /// A segment that does not decode fails its campaign (never a guessed token), the
    /// others go on; its open devices end failed with reason segmentCorrupt.
    @Test func aCorruptSegmentFailsItsCampaignOnly() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        let lease = LeaseTerms(owner: "a", seconds: 30)
        _ = try storage.insert(newCampaign("bad"), deliveries: (0..<2000).map { NewDelivery(token: token($0)) }, now: 1000)
        _ = try storage.insert(newCampaign("good"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
        let bad = try #require(try storage.campaign(id: "bad")).seq
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try db.execute("UPDATE segments SET tokens = substring(tokens FROM 1 FOR 100) WHERE campaign = $1 AND seg = 1", [.int(bad)])
        var claims: [ClaimedDelivery] = []
        var pending: [DeliveryUpdate] = []
        for _ in 0..<10 {
            let got = try storage.recordAndClaim(pending, claimLimit: 3000, lease: lease, now: 1001)
            claims += got
            pending = delivered(got)
            if got.isEmpty { break }
        }
        #expect(claims.filter { $0.campaign == bad }.map(\.index) == Array(0..<1024), "nothing of the segment that does not decode")
        #expect(try storage.campaign(id: "good")?.counts == [.delivered: 3])
        let failure = try db.execute("SELECT failure FROM campaigns WHERE seq = $1", [.int(bad)]).optionalText(0, 0)
        #expect(failure?.contains("segment 1 of campaign \(bad)") == true && failure?.contains("does not decode") == true)
        while try storage.closeStopped(now: 1002, limit: 500) > 0 {}
        let summary = try #require(try storage.campaign(id: "bad"))
        #expect(summary.counts == [.delivered: 1024, .failed: 2000 - 1024] && summary.finishedAt == 1002)
        #expect(try storage.reasonCounts(campaign: bad, states: [.failed]) == [ReasonCount(state: .failed, reason: "segmentCorrupt", count: 976)])
    }

    /// A campaign filled in parts: not sent while filling; each part idempotent; started
    /// by `finishFilling`.
    @Test func aCampaignFilledInParts() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        var campaign = newCampaign("parts")
        campaign.filling = true
        _ = try storage.insert(campaign, deliveries: [], now: 1000)
        #expect(throws: StorageError.self) { try storage.finishFilling(campaign: "parts", expectedDevices: nil, transactionalMaxDevices: 100, now: 1000) }
        let first = try storage.appendDevices(campaign: "parts", part: 1, requestSHA256: "h1",
                                              deliveries: (0..<1500).map { NewDelivery(token: token($0)) }, now: 1000)
        #expect(first == .appended(PartReceipt(part: 1, firstIndex: 0, devices: 1500, skipped: 0)))
        #expect(try storage.appendDevices(campaign: "parts", part: 1, requestSHA256: "h1", deliveries: [], now: 1000)
                == .alreadyAppended(PartReceipt(part: 1, firstIndex: 0, devices: 1500, skipped: 0)))
        do throws(StorageError) {
            _ = try storage.appendDevices(campaign: "parts", part: 1, requestSHA256: "other", deliveries: [], now: 1000)
            Issue.record("a part with other devices was accepted")
        } catch {
            #expect(error.code == .partConflict)
        }
        let second = try storage.appendDevices(campaign: "parts", part: 2, requestSHA256: "h2",
                                               deliveries: (1500..<1600).map { NewDelivery(token: token($0)) }, now: 1000)
        #expect(second == .appended(PartReceipt(part: 2, firstIndex: 1500, devices: 100, skipped: 0)), "a part continues the last segment")
        #expect(try storage.claim(limit: 10, lease: testLease, now: 1001).isEmpty, "not sent while filling")
        guard case .started(let summary) = try storage.finishFilling(campaign: "parts", expectedDevices: nil, transactionalMaxDevices: 100, now: 1002) else { Issue.record("not started"); return }
        #expect(summary.devices == 1600 && summary.counts == [.pending: 1600])
        guard case .unchanged = try storage.finishFilling(campaign: "parts", expectedDevices: nil, transactionalMaxDevices: 100, now: 1003) else { Issue.record("started twice"); return }
        do throws(StorageError) {
            _ = try storage.appendDevices(campaign: "parts", part: 3, requestSHA256: "h3", deliveries: [], now: 1000)
            Issue.record("a part after the start was accepted")
        } catch {
            #expect(error.code == .notFilling)
        }
        var claimed: [Int] = []
        var pending: [DeliveryUpdate] = []
        for _ in 0..<10 {
            let claims = try storage.recordAndClaim(pending, claimLimit: 1000, lease: testLease, now: 1004)
            claimed += claims.map(\.index)
            pending = delivered(claims)
            if claims.isEmpty { break }
        }
        #expect(claimed == Array(0..<1600))
        #expect(try storage.campaign(id: "parts")?.counts == [.delivered: 1600])
        do throws(StorageError) {
            _ = try storage.appendDevices(campaign: "nope", part: 1, requestSHA256: "h", deliveries: [], now: 1000)
            Issue.record("a part for no campaign was accepted")
        } catch {
            #expect(error.code == .campaignNotFound)
        }
    }

    /// A database main wrote (schema 6, Fixtures/postgres-schema6.sql, made by main's code:
    /// see make-schema6-fixture.swift.txt) migrates in place: what it reads is what main
    /// read, the finished campaign's results unchanged, and the unfinished ones continue
    /// on their rows (the expired lease taken over, the due retry sent, the pending ones).
    @Test func aSchema6DatabaseFromMainMigratesAndItsCampaignsContinue() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.newDatabaseURL()
        let database = String(url.split(separator: "/").last!)
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/postgres-schema6.sql").path
        let restore = Process()
        restore.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        restore.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres",
                             "-d", database, "-f", fixture]
        restore.standardOutput = FileHandle.nullDevice
        try restore.run()
        restore.waitUntilExit()
        #expect(restore.terminationStatus == 0)
        #expect(try cluster.psql("SELECT version FROM pushgate_schema", database: database) == "6")
        let storage = try instance(url, "new-gw")
        #expect(try storage.schemaVersion() == PostgresSchema.currentVersion)
        var lines: [String] = []
        for id in ["done", "running", "paused", "scheduled"] {
            let summary = try #require(try storage.campaign(id: id))
            lines.append("\(id) finished=\(summary.finishedAt.map { "\($0)" } ?? "nil") counts=\(summary.counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.name):\($0.value)" }.joined(separator: ","))")
            for row in try storage.results(campaign: summary.seq, offset: 0, limit: 100) { lines.append("\(id) \(row)") }
        }
        #expect(lines == (try Self.golden()))
        // The unfinished campaign goes on: at 2000 its retry is due and the old lease expired.
        let lease = LeaseTerms(owner: "new-gw", seconds: 30)
        let claims = try storage.claim(limit: 10, lease: lease, now: 2000)
        let running = try #require(try storage.campaign(id: "running")).seq
        #expect(claims.filter { $0.campaign == running }.map(\.index).sorted() == [1, 2, 3, 4])
        #expect(claims.first { $0.index == 2 && $0.campaign == running }?.attempt == 2, "the expired lease taken over")
        try storage.record(delivered(claims), now: 2001)
        #expect(try storage.campaign(id: "running")?.counts == [.delivered: 5])
        #expect(try storage.campaign(id: "running")?.finishedAt == 2001)
        // Paused stays paused; resumed, it is sent from its rows too.
        guard case .changed = try storage.changeLifecycle(id: "paused", .resume, now: 2002) else { Issue.record("not resumed"); return }
        let paused = try storage.claim(limit: 10, lease: lease, now: 2003)
        #expect(paused.map(\.index) == [0, 1, 2])
        try storage.record(delivered(paused), now: 2004)
        #expect(try storage.campaign(id: "paused")?.finishedAt == 2004)
        // A campaign created now is segmented next to them.
        _ = try storage.insert(newCampaign("new"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 2005)
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        #expect(try db.execute("SELECT id, segment_size FROM campaigns ORDER BY seq").rows == 5)
        #expect(try rows(db, "SELECT count(*) FROM campaigns WHERE segment_size > 0") == 1)
        #expect(try storage.nextDueTime(now: 2006) == 2006, "the new campaign is due now")
    }
}
