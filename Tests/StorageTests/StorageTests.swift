import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Storage
@testable import PostgresStorage

func token(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return String(repeating: "a", count: 64 - hex.count) + hex
}

func newCampaign(_ id: String, dryRun: Bool = false, key: IdempotencyClaim? = nil) -> NewCampaign {
    NewCampaign(id: id, createdAt: 1000, dryRun: dryRun, message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-", idempotency: key)
}

/// The lease every test claim takes unless it says otherwise.
let testLease = LeaseTerms(owner: "test-host/1/0", seconds: 30)

extension CampaignStorage {
    func claim(limit: Int, now: Double) throws(StorageError) -> [ClaimedDelivery] {
        try claim(limit: limit, lease: testLease, now: now)
    }
}

@Suite struct StorageTests {
    @Test(arguments: Backend.allCases) func migratesAFreshFileAndReopensIt(_ backend: Backend) throws {
        let location = try StoreLocation.fresh(backend)
        let current = backend == .sqlite ? Schema.currentVersion : PostgresSchema.currentVersion
        do {
            let storage = try location.open()
            #expect(try location.schemaVersion() == current)
            _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1))], now: 1000)
        }
        let reopened = try location.open()
        #expect(try location.schemaVersion() == current)
        #expect(try reopened.campaign(id: "c1")?.devices == 1)
    }

    @Test func refusesADatabaseFromANewerPushgate() throws {
        let path = temporaryDatabasePath()
        do {
            let db = try SQLiteDatabase(path: path)
            try db.execute("PRAGMA user_version = \(Schema.currentVersion + 1)")
        }
        #expect(throws: StorageError.self) { try SQLiteCampaignStorage(path: path) }
        do {
            _ = try SQLiteCampaignStorage(path: path)
        } catch {
            #expect(error.code == .schemaTooNew)
        }
    }

    @Test func openFailureNamesThePathAndSQLiteMessage() {
        do {
            _ = try SQLiteCampaignStorage(path: "/nonexistent-folder/x/y.db")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .openFailed || error.code == .notWritable)
            #expect(error.message.contains("/nonexistent-folder/x/y.db"))
        }
    }

    @Test(arguments: Backend.allCases) func claimMarksInFlightAndRecordFinishesTheCampaign(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let devices = (0..<5).map { NewDelivery(token: token($0), body: $0 == 2 ? Array("own".utf8) : nil) }
        #expect(try storage.insert(newCampaign("c1"), deliveries: devices, now: 1000) == .created(devices: 5, skipped: 0))
        let first = try storage.claim(limit: 3, now: 1001)
        #expect(first.map(\.index) == [0, 1, 2])
        #expect(first.allSatisfy { $0.attempt == 1 })
        #expect(first[2].body == Array("own".utf8))
        #expect(first[0].body == nil)
        // Claimed rows are not claimed again.
        #expect(try storage.claim(limit: 10, now: 1001).map(\.index) == [3, 4])
        #expect(try storage.claim(limit: 10, now: 1001).isEmpty)
        #expect(try storage.campaign(id: "c1")?.counts[.inFlight] == 5)

        let seq = first[0].campaign
        try storage.record([
            DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: "id-0", lease: 1),
            DeliveryUpdate(campaign: seq, index: 1, state: .failed, status: 400, reason: "BadDeviceToken", lease: 1),
            DeliveryUpdate(campaign: seq, index: 2, state: .unregistered, status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_000_000, lease: 1),
            DeliveryUpdate(campaign: seq, index: 3, state: .retrying, status: 503, reason: "ServiceUnavailable", nextAttemptAt: 1005, lease: 1),
            DeliveryUpdate(campaign: seq, index: 4, state: .delivered, status: 200, apnsID: "id-4", lease: 1),
        ], now: 1002)
        var summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.finishedAt == nil)
        #expect(summary.counts[.delivered] == 2 && summary.counts[.retrying] == 1 && summary.counts[.unregistered] == 1)
        #expect(try storage.queueDepth() == 1)
        #expect(try storage.nextDueTime(now: 1001) == 1005)
        // Not due yet, then due.
        #expect(try storage.claim(limit: 10, now: 1004).isEmpty)
        let retry = try storage.claim(limit: 10, now: 1005)
        #expect(retry.map(\.index) == [3] && retry[0].attempt == 2)
        try storage.record([DeliveryUpdate(campaign: seq, index: 3, state: .delivered, status: 200, apnsID: "id-3", lease: retry[0].lease)], now: 1006)
        summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.finishedAt == 1006 && summary.status(at: 1006) == .completed)
        #expect(try storage.queueDepth() == 0)
        let rows = try storage.results(campaign: seq, offset: 1, limit: 2)
        #expect(rows.map(\.index) == [1, 2])
        #expect(rows[0].reason == "BadDeviceToken" && rows[0].status == 400)
        #expect(rows[1].timestampMilliseconds == 1_700_000_000_000)
    }

    @Test(arguments: Backend.allCases) func aLateResultNeverOverwritesAFinalState(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1))], now: 1000)
        let claimed = try storage.claim(limit: 1, now: 1000)
        let seq = claimed[0].campaign
        try storage.record([DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: "x", lease: claimed[0].lease)], now: 1001)
        try storage.record([DeliveryUpdate(campaign: seq, index: 0, state: .failed, status: 500, reason: "InternalServerError", lease: claimed[0].lease)], now: 1002)
        let row = try storage.results(campaign: seq, offset: 0, limit: 1)[0]
        #expect(row.state == .delivered && row.apnsID == "x")
        #expect(try storage.campaign(id: "c1")?.finishedAt == 1001)
    }

    @Test(arguments: Backend.allCases) func aSandboxDeliveryKeepsItsUniqueID(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1)), NewDelivery(token: token(2))], now: 1000)
        let claimed = try storage.claim(limit: 2, now: 1000)
        let seq = claimed[0].campaign
        var sandbox = DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: "id-0", lease: claimed[0].lease)
        sandbox.apnsUniqueID = "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7d"
        try storage.record([sandbox, DeliveryUpdate(campaign: seq, index: 1, state: .delivered, status: 200, apnsID: "id-1", lease: claimed[1].lease)], now: 1001)
        let rows = try storage.results(campaign: seq, offset: 0, limit: 2)
        #expect(rows.map(\.apnsUniqueID) == ["9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7d", nil])
        #expect(rows.map(\.apnsID) == ["id-0", "id-1"])
    }

    @Test func requeueAfterCrashReturnsInFlightRowsOnly() throws {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath())
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<4).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try storage.claim(limit: 3, now: 1000)
        try storage.record([DeliveryUpdate(campaign: claimed[0].campaign, index: 0, state: .delivered, status: 200, lease: claimed[0].lease)], now: 1001)
        #expect(try storage.requeueInFlight() == 2)
        // The counters are rebuilt from the rows: nothing in flight after a restart.
        let counts = try #require(try storage.campaign(id: "c1")).counts
        #expect(counts[.inFlight, default: 0] == 0 && counts[.pending] == 3 && counts[.delivered] == 1)
        #expect(try storage.claim(limit: 10, now: 1002).map(\.index) == [1, 2, 3])
        #expect(try storage.campaign(id: "c1")?.counts[.inFlight] == 3)
    }

    @Test(arguments: Backend.allCases) func deadTokensAreSkippedUntilRegisteredAgainAfterTheirDeath(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1)), NewDelivery(token: token(2))], now: 1000)
        let claimed = try storage.claim(limit: 2, now: 1000)
        try storage.record([
            DeliveryUpdate(campaign: claimed[0].campaign, index: 0, state: .unregistered, status: 410, reason: "Unregistered", timestampMilliseconds: 5000, lease: 1),
            DeliveryUpdate(campaign: claimed[0].campaign, index: 1, state: .delivered, status: 200, lease: 1),
        ], now: 1001)
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).map(\.token) == [token(1)])
        #expect(try storage.pendingFeedback(limit: 10).map(\.token) == [token(1)])

        #expect(try storage.insert(newCampaign("c2"), deliveries: [NewDelivery(token: token(1)), NewDelivery(token: token(2))], now: 1002)
                == .created(devices: 2, skipped: 1))
        let c2 = try #require(try storage.campaign(id: "c2"))
        #expect(c2.counts[.skipped] == 1 && c2.counts[.pending] == 1)
        let skipped = try storage.results(campaign: c2.seq, offset: 0, limit: 1)[0]
        #expect(skipped.state == .skipped && skipped.reason == "Unregistered" && skipped.timestampMilliseconds == 5000)

        // Registered before Apple's timestamp: still dead. After: sent again.
        #expect(try storage.registerToken(token(1), atMilliseconds: 4000)?.timestampMilliseconds == 5000)
        #expect(try storage.insert(newCampaign("c3"), deliveries: [NewDelivery(token: token(1))], now: 1003) == .created(devices: 1, skipped: 1))
        _ = try storage.registerToken(token(1), atMilliseconds: 6000)
        #expect(try storage.insert(newCampaign("c4"), deliveries: [NewDelivery(token: token(1))], now: 1004) == .created(devices: 1, skipped: 0))
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).isEmpty)
        #expect(try storage.registerToken(token(9), atMilliseconds: 6000) == nil)
    }

    @Test(arguments: Backend.allCases) func deadTokensPageInTimestampOrder(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<5).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try storage.claim(limit: 5, now: 1000)
        try storage.record(claimed.map {
            DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .unregistered, status: 410, reason: "ExpiredToken",
                           timestampMilliseconds: Int64(10_000 - $0.index * 1000), lease: $0.lease)
        }, now: 1001)
        let first = try storage.deadTokens(sinceMilliseconds: 7000, after: nil, limit: 2)
        #expect(first.map(\.timestampMilliseconds) == [7000, 8000])
        let last = try #require(first.last)
        let second = try storage.deadTokens(sinceMilliseconds: 7000, after: (last.timestampMilliseconds, last.token), limit: 2)
        #expect(second.map(\.timestampMilliseconds) == [9000, 10000])
        let feedback = try storage.pendingFeedback(limit: 3)
        // Not acknowledged (the receiver failed): the same batch again, whatever the limit.
        #expect(try storage.pendingFeedback(limit: 10).map(\.seq) == feedback.map(\.seq))
        try storage.acknowledgeFeedback(through: feedback[2].seq)
        #expect(try storage.pendingFeedback(limit: 10).count == 2)
    }

    @Test(arguments: Backend.allCases) func aWebhookBatchKeepsItsRowsWhenMoreArriveAndAcrossARestart(_ backend: Backend) throws {
        let location = try StoreLocation.fresh(backend)
        let storage = try location.open()
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<4).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try storage.claim(limit: 2, now: 1000)
        try storage.record(claimed.map {
            DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .unregistered, status: 410, reason: "Unregistered", lease: $0.lease)
        }, now: 1001)
        let batch = try storage.pendingFeedback(limit: 500)
        #expect(batch.count == 2)
        // Two more dead tokens arrive while the receiver is down.
        let more = try storage.claim(limit: 2, now: 1002)
        try storage.record(more.map {
            DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .unregistered, status: 410, reason: "Unregistered", lease: $0.lease)
        }, now: 1003)
        #expect(try storage.pendingFeedback(limit: 500) == batch, "the retry is the same batch")
        let reopened = try location.open()
        #expect(try reopened.pendingFeedback(limit: 500) == batch, "and after a restart")
        try reopened.acknowledgeFeedback(through: batch[1].seq)
        #expect(try reopened.pendingFeedback(limit: 500).map(\.token) == [token(2), token(3)])
    }

    @Test(arguments: Backend.allCases) func idempotencyKeysReturnTheFirstCampaignUntilTheyExpire(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let claim = IdempotencyClaim(key: "k1", requestSHA256: "h1", notBefore: 0)
        #expect(try storage.insert(newCampaign("c1", key: claim), deliveries: [NewDelivery(token: token(1))], now: 1000) == .created(devices: 1, skipped: 0))
        let record = try #require(try storage.idempotencyRecord(key: "k1", notBefore: 0))
        #expect(record.campaignID == "c1" && record.requestSHA256 == "h1")
        #expect(try storage.insert(newCampaign("c2", key: claim), deliveries: [NewDelivery(token: token(1))], now: 1001) == .keyAlreadyUsed(record))
        #expect(try storage.campaign(id: "c2") == nil)
        // Expired: the key is free again.
        #expect(try storage.idempotencyRecord(key: "k1", notBefore: 2000) == nil)
        let later = IdempotencyClaim(key: "k1", requestSHA256: "h2", notBefore: 2000)
        var c3 = newCampaign("c3", key: later)
        c3.createdAt = 3000
        #expect(try storage.insert(c3, deliveries: [NewDelivery(token: token(1))], now: 3000) == .created(devices: 1, skipped: 0))
        #expect(try storage.purgeIdempotencyKeys(olderThan: 4000) == 1)
    }

    @Test(arguments: Backend.allCases) func failedAtAcceptAndEmptyCampaignsAreFinishedAtOnce(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1), failureReason: "missingVariable")], now: 1000)
        let summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.finishedAt == 1000 && summary.counts[.failed] == 1)
        #expect(try storage.claim(limit: 10, now: 1000).isEmpty)
        #expect(try storage.campaigns(limit: 10, before: nil).map(\.id) == ["c1"])
    }

    @Test(arguments: Backend.allCases) func writableCheckCommits(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        #expect(storage.checkWritable(now: 1) == nil)
    }

    @Test func readinessCheckWritesNothing() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path)
        _ = try storage.insert(newCampaign("c1"), deliveries: [NewDelivery(token: token(1))], now: 1000)
        func walBytes() -> Int {
            var info = stat()
            return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : -1
        }
        let before = walBytes()
        #expect(before > 0)
        for _ in 0..<50 { #expect(storage.checkReady() == nil) }
        #expect(walBytes() == before, "a readiness check wrote to the database")
        #expect(storage.checkWritable(now: 2) == nil)
        #expect(walBytes() > before, "the WAL measure does see a write")
    }

    @Test(arguments: Backend.allCases) func messageComesBackTyped(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        var campaign = newCampaign("c1", dryRun: true)
        campaign.message = StoredMessage(pushType: "background", topic: "com.example.shop", priority: 5,
                                         expiration: 1_900_000_000, collapseId: "sale: 1\nb")
        _ = try storage.insert(campaign, deliveries: [NewDelivery(token: token(1))], now: 1000)
        let claimed = try storage.claim(limit: 1, now: 1000)
        let message = try #require(try storage.message(campaign: claimed[0].campaign))
        #expect(message.id == "c1" && message.dryRun)
        #expect(message.message == campaign.message)
        #expect(message.body == campaign.body)
    }

    /// A channel campaign keeps its channel id; its one delivery's token is the channel.
    @Test(arguments: Backend.allCases) func aChannelCampaignKeepsItsChannel(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        var campaign = newCampaign("c1")
        campaign.message = StoredMessage(pushType: "liveactivity", topic: "com.example.shop.push-type.liveactivity", priority: 5,
                                         expiration: 0, channel: "dHN0LXNyY2gtY2hubA==")
        _ = try storage.insert(campaign, deliveries: [NewDelivery(token: "dHN0LXNyY2gtY2hubA==")], now: 1000)
        let claimed = try storage.claim(limit: 1, now: 1000)
        #expect(claimed.map(\.token) == ["dHN0LXNyY2gtY2hubA=="])
        #expect(try storage.message(campaign: claimed[0].campaign)?.message == campaign.message)
        #expect(try storage.campaign(id: "c1")?.channel == "dHN0LXNyY2gtY2hubA==")
        #expect(try storage.campaigns(limit: 10, before: nil, owner: nil).map(\.channel) == ["dHN0LXNyY2gtY2hubA=="])
    }

    /// Schema 7 turns the header text of older databases into the typed columns.
    @Test func migratesStoredHeaderTextToTypedColumns() throws {
        let path = temporaryDatabasePath()
        do {
            let db = try SQLiteDatabase(path: path)
            for (index, sql) in Schema.migrations.prefix(6).enumerated() {
                try db.execute(sql)
                try db.execute("PRAGMA user_version = \(index + 1)")
            }
            try db.execute("""
                INSERT INTO campaigns(id, created_at, dry_run, headers, body, apns_id_prefix, devices, remaining) VALUES
                ('full', 1, 0, 'apns-push-type: background' || char(10) || 'apns-topic: com.example.shop' || char(10)
                   || 'apns-priority: 5' || char(10) || 'apns-expiration: 1900000000' || char(10) || 'apns-collapse-id: a: b', x'7b7d', 'p', 1, 1),
                ('short', 1, 0, 'apns-push-type: alert' || char(10) || 'apns-topic: com.example.shop' || char(10) || 'apns-priority: 10',
                   x'7b7d', 'p', 1, 1),
                ('empty', 1, 0, '', x'7b7d', 'p', 0, 0);
                """)
        }
        let storage = try SQLiteCampaignStorage(path: path)
        #expect(try storage.schemaVersion() == Schema.currentVersion)
        #expect(try storage.message(campaign: 1)?.message
                == StoredMessage(pushType: "background", topic: "com.example.shop", priority: 5, expiration: 1_900_000_000, collapseId: "a: b"))
        #expect(try storage.message(campaign: 2)?.message == StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10))
        #expect(try storage.message(campaign: 3)?.message == StoredMessage(pushType: "alert", topic: "", priority: 10))
    }
}

/// A database written before campaigns named their app keeps working: its rows belong to
/// the one configured app once adopted, and to no API key.
@Suite struct AppsMigrationTests {
    @Test func anOldDatabaseIsBroughtForwardAndItsRowsAdopted() throws {
        let path = temporaryDatabasePath()
        let appsMigration = try #require(Schema.migrations.firstIndex { $0.contains("ADD COLUMN owner") })
        do {
            let db = try SQLiteDatabase(path: path)
            for sql in Schema.migrations[..<appsMigration] { try db.execute(sql) }
            try db.execute("PRAGMA user_version = \(appsMigration)")
            let (h, b) = ("apns-push-type: alert\napns-topic: com.example.shop", "x'7b7d'")
            try db.execute("""
                INSERT INTO campaigns(id, created_at, dry_run, headers, body, apns_id_prefix, devices, remaining, finished_at)
                VALUES ('old', 1000, 0, '\(h)', \(b), '01234567-89ab-4cde-8f01-', 1, 0, 1001);
                INSERT INTO tokens(token, dead_at_ms, dead_reason, recorded_at) VALUES ('\(token(7))', 5, 'Unregistered', 1000);
                INSERT INTO idempotency_keys(key, request_sha256, campaign_id, created_at) VALUES ('order-1', 'abc', 'old', 1000);
                """)
        }
        let storage = try SQLiteCampaignStorage(path: path)
        #expect(try storage.schemaVersion() == Schema.currentVersion)
        #expect(try storage.campaign(id: "old")?.app == "", "not yet adopted")
        #expect(try storage.adoptUnnamedRows(app: "default") == 1)
        let old = try #require(try storage.campaign(id: "old"))
        #expect(old.app == "default")
        #expect(old.owner == "", "created before keys were scoped: no key's")
        #expect(try storage.deadTokens(app: "default", sinceMilliseconds: 0, after: nil, limit: 10).map(\.token) == [token(7)])
        #expect(try storage.deadTokens(app: "news", sinceMilliseconds: 0, after: nil, limit: 10).isEmpty)
        // The old Idempotency-Key is the no-key caller's.
        #expect(try storage.idempotencyRecord(key: " order-1", notBefore: 0)?.campaignID == "old")
        #expect(try storage.idempotencyRecord(key: "order-1", notBefore: 0) == nil)
        #expect(try storage.adoptUnnamedRows(app: "default") == 0, "adopting twice changes nothing")
    }

    @Test(arguments: Backend.allCases) func campaignsAreListedByOwnerAndDeadTokensSkippedPerApp(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        var a = newCampaign("a")
        a.app = "shop"
        a.owner = "shop-backend"
        var b = newCampaign("b")
        b.app = "news"
        b.owner = "news-backend"
        _ = try storage.insert(a, deliveries: [NewDelivery(token: token(1))], now: 1000)
        _ = try storage.insert(b, deliveries: [NewDelivery(token: token(1))], now: 1000)
        #expect(try storage.campaigns(limit: 10, before: nil, owner: "shop-backend").map(\.id) == ["a"])
        #expect(try storage.campaigns(limit: 10, before: nil, owner: nil).map(\.id) == ["b", "a"])
        #expect(try storage.campaigns(limit: 10, before: nil, owner: nil, app: "news").map(\.id) == ["b"])
        #expect(try storage.campaigns(limit: 10, before: nil, owner: "shop-backend", app: "news").isEmpty)
        let claimed = try storage.claim(limit: 10, now: 1000)
        let shopDelivery = try #require(claimed.first { $0.campaign == 1 })
        _ = try storage.record([DeliveryUpdate(campaign: shopDelivery.campaign, index: shopDelivery.index, state: .unregistered,
                                               lease: shopDelivery.lease)], now: 1001)
        #expect(try storage.message(campaign: 1)?.app == "shop")
        var again = newCampaign("c")
        again.app = "shop"
        var other = newCampaign("d")
        other.app = "news"
        #expect(try storage.insert(again, deliveries: [NewDelivery(token: token(1))], now: 1002) == .created(devices: 1, skipped: 1))
        #expect(try storage.insert(other, deliveries: [NewDelivery(token: token(1))], now: 1002) == .created(devices: 1, skipped: 0))
    }

    /// A held route's campaigns are left where they are; every other campaign is claimed.
    @Test(arguments: Backend.allCases) func claimsSkipTheCampaignsOfAHeldRoute(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        var shop = newCampaign("shop-1")
        shop.app = "shop"
        shop.environment = "sandbox"
        var news = newCampaign("news-1")
        news.app = "news"
        news.environment = "production"
        _ = try storage.insert(news, deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
        _ = try storage.insert(shop, deliveries: (10..<13).map { NewDelivery(token: token($0)) }, now: 1000)
        let asked = Mutex<[CampaignRoute]>([])
        let holds = ClaimHolds { route in
            asked.withLock { $0.append(route) }
            return route.app == "news"
        }
        let lease = LeaseTerms(owner: "test", seconds: 30)
        let claimed = try storage.recordAndClaim([], claimLimit: 10, lease: lease, now: 1000, holds: holds)
        #expect(claimed.count == 3)
        #expect(Set(claimed.map(\.campaign)) == [2], "only the shop's campaign")
        #expect(asked.withLock { $0 } == [CampaignRoute(app: "news", environment: "production", dryRun: false),
                                          CampaignRoute(app: "shop", environment: "sandbox", dryRun: false)], "each route asked once")
        let waiting = try #require(try storage.campaign(id: "news-1"))
        #expect(waiting.counts[.pending] == 3, "the held campaign's devices stay pending")
        #expect(try storage.results(campaign: waiting.seq, offset: 0, limit: 10).allSatisfy { $0.attempts == 0 })
        // Released: its devices are claimed like any others.
        let later = try storage.recordAndClaim([], claimLimit: 10, lease: lease, now: 1001, holds: .none)
        #expect(later.count == 3 && Set(later.map(\.campaign)) == [1])
    }
}
