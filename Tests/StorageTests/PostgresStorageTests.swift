import Foundation
import Synchronization
import Testing
import TestSupport
@testable import PostgresStorage
@testable import Storage
import Timing

/// What only PostgreSQL has: several instances on one database. The shared contract is in
/// the other suites, run against both backends.
@Suite struct PostgresStorageTests {
    func instance(_ url: String, _ name: String, webhookLeaseSeconds: Double = 120) throws(StorageError) -> PostgresCampaignStorage {
        try PostgresCampaignStorage(options: .init(url: url, poolSize: 2, instance: name, webhookLeaseSeconds: webhookLeaseSeconds, clock: SystemClock()))
    }

    @Test func refusesADatabaseFromANewerPushgate() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.newDatabaseURL()
        _ = try instance(url, "a")
        try cluster.psql("UPDATE pushgate_schema SET version = \(PostgresSchema.currentVersion + 1)", database: String(url.split(separator: "/").last!))
        do throws(StorageError) {
            _ = try instance(url, "b")
            Issue.record("a newer schema was accepted")
        } catch {
            #expect(error.code == .schemaTooNew)
            #expect(error.message.contains("\(PostgresSchema.currentVersion + 1)"))
        }
    }

    @Test func instancesStartingTogetherMigrateOnce() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { i in
            do throws(StorageError) { _ = try instance(url, "gw-\(i)") } catch { failures.withLock { $0.append(error.description) } }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try instance(url, "check").schemaVersion() == PostgresSchema.currentVersion)
    }

    @Test func anUnreachableServerIsUnavailable() throws {
        let port = try PostgresCluster.shared().port
        do throws(StorageError) {
            // The cluster's port with a database that does not exist: refused by the server.
            _ = try instance("postgresql://postgres@127.0.0.1:\(port)/no_such_database", "a")
            Issue.record("connected to a database that does not exist")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("no_such_database"))
        }
        do throws(StorageError) {
            _ = try instance("postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=2", "a")
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.code == .unavailable)
        }
    }

    @Test func claimsSkipSegmentsAnotherTransactionHoldsInsteadOfWaiting() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<3000).map { NewDelivery(token: token($0)) }, now: 1000)
        // Another instance is in the middle of claiming the first segment.
        let other = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try other.execute("BEGIN")
        try other.execute("SELECT seg FROM segment_state WHERE seg = 0 FOR UPDATE")
        let started = Date()
        let claimed = try storage.claim(limit: 10, lease: LeaseTerms(owner: "a", seconds: 30), now: 1000)
        #expect(Date().timeIntervalSince(started) < 5, "the claim waited for the other transaction")
        #expect(claimed.map(\.index) == Array(1024..<1034))
        try other.execute("ROLLBACK")
        #expect(try storage.claim(limit: 10, lease: LeaseTerms(owner: "a", seconds: 30), now: 1000).map(\.index) == Array(0..<10))
    }

    /// A campaign as schema 6 wrote it (`segment_size` 0): a row per device, claimed and
    /// recorded row by row as before segments.
    func insertLegacy(_ url: String, _ id: String, devices: Int) throws -> Int64 {
        let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        let row = try db.execute("""
            INSERT INTO campaigns(id, created_at, dry_run, body, apns_id_prefix, devices, lane)
            VALUES ($1, 1000, false, $2, '01234567-89ab-4cde-8f01-', $3, 1) RETURNING seq
            """, [.text(id), .bytes(Array(#"{"aps":{"alert":"hi"}}"#.utf8)), .integer(devices)])
        let seq = row.int(0, 0)
        try db.execute("""
            INSERT INTO deliveries(campaign, idx, token, state)
            SELECT $1, i, lpad(to_hex(i), 64, 'a'), 0 FROM generate_series(0, $2::int - 1) i
            """, [.int(seq), .integer(devices)])
        try db.execute("INSERT INTO campaign_counts(campaign, state, shard, n) VALUES ($1, 0, 1023, $2)", [.int(seq), .integer(devices)])
        return seq
    }

    /// Pending devices are claimed from the instance's frontier (the last one it claimed),
    /// in order; rows behind it are still claimed: those another transaction held when the
    /// frontier passed them, once the rows after it run out, and those of a claim that
    /// rolled back (the frontier moves only on commit). Finished, the campaign's frontier
    /// is dropped.
    @Test func pendingClaimsStartAtTheFrontierAndStillTakeWhatItPassed() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        let lease = LeaseTerms(owner: "a", seconds: 30)
        let devices = 3000
        let seq = try insertLegacy(url, "c1", devices: devices)
        func delivered(_ claims: [ClaimedDelivery]) -> [DeliveryUpdate] {
            claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) }
        }
        var seen: [Int] = []
        var pending: [DeliveryUpdate] = []
        // Many claimed and recorded: each claim still takes the next ones in order.
        for batch in 0..<10 {
            let claims = try storage.recordAndClaim(pending, claimLimit: 100, lease: lease, now: 1001)
            #expect(claims.map(\.index) == Array(batch * 100..<(batch + 1) * 100))
            #expect(storage.pendingFrontier(campaign: seq) == PendingFrontier(nextAt: 0, index: Int64(batch * 100 + 99)))
            seen += claims.map(\.index)
            pending = delivered(claims)
        }
        // Another instance is claiming 1000..<1010: passed by this one.
        let other = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try other.execute("BEGIN")
        try other.execute("SELECT idx FROM deliveries WHERE idx >= 1000 AND idx < 1010 FOR UPDATE")
        var claims = try storage.recordAndClaim(pending, claimLimit: 100, lease: lease, now: 1001)
        #expect(claims.map(\.index) == Array(1010..<1110))
        try other.execute("ROLLBACK")
        seen += claims.map(\.index)
        pending = delivered(claims)
        // A claim that rolls back (here a trigger fails it) leaves the frontier where it was.
        try other.executeScript("""
            CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
            CREATE TRIGGER refuse BEFORE UPDATE OF served_turn ON campaigns FOR EACH ROW EXECUTE FUNCTION refuse();
            """)
        #expect(throws: StorageError.self) { try storage.recordAndClaim(pending, claimLimit: 100, lease: lease, now: 1001) }
        #expect(storage.pendingFrontier(campaign: seq) == PendingFrontier(nextAt: 0, index: 1109))
        try other.execute("DROP TRIGGER refuse ON campaigns")
        claims = try storage.recordAndClaim(pending, claimLimit: 100, lease: lease, now: 1001)
        #expect(claims.map(\.index) == Array(1110..<1210), "the rolled-back claim's rows, not the ones after them")
        seen += claims.map(\.index)
        pending = delivered(claims)
        // The rest: the last claim after the frontier comes short and takes the passed rows.
        var last: [Int] = []
        while true {
            claims = try storage.recordAndClaim(pending, claimLimit: 100, lease: lease, now: 1001)
            if claims.isEmpty { break }
            last = claims.map(\.index)
            seen += last
            pending = delivered(claims)
        }
        #expect(seen.count == devices && Set(seen).count == devices, "every device claimed exactly once")
        #expect(last == Array(1000..<1010) + Array(2910..<3000))
        #expect(try storage.campaign(id: "c1")?.finishedAt == 1001)
        _ = try storage.claim(limit: 100, lease: lease, now: 1002)
        #expect(storage.pendingFrontier(campaign: seq) == nil, "a finished campaign's frontier is dropped")
    }

    /// The work of a claim does not grow with the devices claimed before it: after 20,000
    /// claimed (their index entries dead, no vacuum), the pending claim from the frontier
    /// reads a few index and heap pages; from the campaign's first entry it reads them all.
    @Test func aPendingClaimFromTheFrontierDoesNotReadTheDevicesClaimedBefore() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let storage = try instance(url, "a")
        let other = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
        try other.execute("ALTER TABLE deliveries SET (autovacuum_enabled = false)")
        let lease = LeaseTerms(owner: "a", seconds: 30)
        let seq = try insertLegacy(url, "c1", devices: 21_000)
        var pending: [DeliveryUpdate] = []
        for _ in 0..<20 {
            let claims = try storage.recordAndClaim(pending, claimLimit: 1000, lease: lease, now: 1001)
            pending = claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) }
        }
        _ = try storage.record(pending, now: 1001)
        let frontier = try #require(storage.pendingFrontier(campaign: seq))
        #expect(frontier.index == 19_999)
        /// Shared buffers the pending claim's scan of `deliveries_due` touched (hit or read),
        /// run and rolled back.
        func buffers(afterFrontier: Bool) throws -> Int {
            var values: [PGValue] = [.int(seq), .double(1001), .integer(100), .text("probe"), .double(2000)]
            if afterFrontier { values += [.double(frontier.nextAt), .int(frontier.index)] }
            try other.execute("BEGIN")
            defer { _ = try? other.execute("ROLLBACK") }
            let plan = try other.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + PostgresCampaignStorage.dueClaim(state: .pending, afterFrontier: afterFrontier), values)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.text(0, 0).utf8)) as? [[String: Any]])
            // The scan that picks the rows (the UPDATE's own writes are the same either way).
            func scans(_ node: [String: Any]) -> [[String: Any]] {
                (node["Index Name"] as? String == "deliveries_due" ? [node] : [])
                    + (node["Plans"] as? [[String: Any]] ?? []).flatMap(scans)
            }
            let root = try #require(json.first?["Plan"] as? [String: Any])
            let scan = try #require(scans(root).first)
            return (scan["Shared Hit Blocks"] as? Int ?? 0) + (scan["Shared Read Blocks"] as? Int ?? 0)
        }
        let fromFrontier = try buffers(afterFrontier: true)
        let fromStart = try buffers(afterFrontier: false)
        #expect(fromFrontier * 5 < fromStart, "from the frontier \(fromFrontier) buffers, from the start \(fromStart)")
    }

    @Test func twoInstancesClaimingAtOnceShareTheRowsAndFinishTheCampaignOnce() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let instances = [try instance(url, "a"), try instance(url, "b"), try instance(url, "c")]
        let devices = 3000
        _ = try instances[0].insert(newCampaign("c1"), deliveries: (0..<devices).map { NewDelivery(token: token($0)) }, now: 1000)
        let seen = Mutex<[String: [Int]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: instances.count) { i in
            let storage = instances[i]
            let lease = LeaseTerms(owner: "gw-\(i)", seconds: 30)
            var pending: [DeliveryUpdate] = []
            do throws(StorageError) {
                for _ in 0..<1000 {
                    let claims = try storage.recordAndClaim(pending, claimLimit: 97, lease: lease, now: 1001)
                    pending = claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) }
                    seen.withLock { $0[lease.owner, default: []].append(contentsOf: claims.map(\.index)) }
                    if claims.isEmpty { break }
                }
            } catch {
                failures.withLock { $0.append(error.description) }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let all = seen.withLock { $0.values.flatMap { $0 } }
        #expect(all.count == devices && Set(all).count == devices, "every device claimed exactly once")
        let summary = try #require(try instances[1].campaign(id: "c1"))
        #expect(summary.counts == [.delivered: devices])
        #expect(summary.finishedAt == 1001)
        #expect(try instances[2].pendingCampaignEvents(limit: 10).map(\.campaign.id) == ["c1"], "one campaign.finished event")
        #expect(try instances[0].queueDepth() == 0)
    }

    /// An idempotency key and a dead token are the fleet's, not one instance's: the same key
    /// posted to eight instances at once makes one campaign (the others answer with it), and
    /// a token one instance learnt is dead is skipped by another's next campaign.
    @Test func idempotencyKeysAndDeadTokensAreSharedByTheInstances() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let instances = try (0..<8).map { try instance(url, "gw-\($0)") }
        let claim = IdempotencyClaim(key: "order-42", requestSHA256: "same-body", notBefore: 0)
        let outcomes = Mutex<[InsertOutcome]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: instances.count) { i in
            do throws(StorageError) {
                let outcome = try instances[i].insert(newCampaign("c\(i)", key: claim), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
                outcomes.withLock { $0.append(outcome) }
            } catch { failures.withLock { $0.append(error.description) } }
        }
        #expect(failures.withLock { $0 } == [])
        let all = outcomes.withLock { $0 }
        let created = all.filter { if case .created = $0 { true } else { false } }
        #expect(created == [.created(devices: 3, skipped: 0)], "one campaign for the key: \(all)")
        let winner = try #require(try instances[0].idempotencyRecord(key: "order-42", notBefore: 0))
        #expect(all.filter { $0 == .keyAlreadyUsed(winner) }.count == instances.count - 1)
        #expect(try instances[0].campaigns(limit: 10, before: nil, owner: nil, app: nil).map(\.id) == [winner.campaignID])

        // Instance 3 records a 410 for token 1; instance 5's next campaign skips that token.
        let claimed = try instances[3].claim(limit: 3, lease: testLease, now: 1001)
        try instances[3].record(claimed.map {
            $0.index == 1 ? DeliveryUpdate(campaign: $0.campaign, index: 1, state: .unregistered, status: 410, reason: "Unregistered",
                                           timestampMilliseconds: 5000, lease: $0.lease)
                : DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease)
        }, now: 1002)
        #expect(try instances[5].insert(newCampaign("next"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1003)
                == .created(devices: 3, skipped: 1))
    }

    @Test func aWebhookBatchIsSentByOneInstanceAtATime() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let a = try instance(url, "a", webhookLeaseSeconds: 0.5)
        let b = try instance(url, "b", webhookLeaseSeconds: 0.5)
        _ = try a.insert(newCampaign("c1"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try a.claim(limit: 3, lease: testLease, now: 1000)
        try a.record(claimed.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .unregistered, status: 410, lease: $0.lease) }, now: 1001)
        let batch = try a.pendingFeedback(limit: 10)
        #expect(batch.count == 3)
        #expect(try b.pendingFeedback(limit: 10).isEmpty, "a holds the batch")
        #expect(try a.pendingFeedback(limit: 10) == batch, "a's retry is the same batch")
        // a stops coming back (it died): its lease runs out and b takes the same batch over.
        Thread.sleep(forTimeInterval: 0.7)
        #expect(try b.pendingFeedback(limit: 10) == batch)
        #expect(try a.pendingFeedback(limit: 10).isEmpty, "now b holds it")
        try b.acknowledgeFeedback(through: batch[2].seq)
        #expect(try a.pendingFeedback(limit: 10).isEmpty && b.pendingFeedback(limit: 10).isEmpty)
    }

    @Test func theProviderTokenIsMintedOnceAcrossInstances() throws {
        let url = try PostgresCluster.shared().newDatabaseURL()
        let instances = try (0..<4).map { try instance(url, "gw-\($0)") }
        let key = SigningKeyName(teamId: "TEAM123456", keyId: "KEY1234567", fingerprint: String(repeating: "ab", count: 32))
        let minted = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            _ = try? instances[i % 4].updateProviderToken(key) { current in
                guard current.compact == nil else { return nil }
                minted.withLock { $0 += 1 }
                return StoredProviderToken(compact: "token-\(i)", issuedAt: 1000)
            }
        }
        #expect(minted.withLock { $0 } == 1)
        #expect(try instances[3].providerToken(key).compact?.hasPrefix("token-") == true)
    }

    @Test func theHeartbeatNamesTheInstance() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.newDatabaseURL()
        let storage = try instance(url, "gw-1/42/1000.0")
        #expect(storage.checkWritable(now: 1234.5) == nil)
        #expect(try cluster.psql("SELECT owner, heartbeat_at FROM instances", database: String(url.split(separator: "/").last!)) == "gw-1/42/1000.0|1234.5")
    }
}
