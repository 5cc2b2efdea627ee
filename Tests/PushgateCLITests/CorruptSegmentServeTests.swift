import Foundation
@testable import PostgresStorage
@testable import Storage
import StrictJSON
import Testing
import TestSupport
import Timing

/// A stored segment that does not decode, through `pushgate serve` on both backends: its
/// campaign fails (one error line in the log, listed by `/readyz`, which stays 200),
/// nothing of the segment reaches APNs, and the other campaign is delivered.
@Suite(.serialized) struct CorruptSegmentServeTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static let bad = "corrupt-campaign"
    static let good = "intact-campaign"

    static func campaign(_ id: String) -> NewCampaign {
        NewCampaign(id: id, createdAt: Date().timeIntervalSince1970, dryRun: false,
                    message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                    body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
    }

    static func insert(_ storage: any CampaignStorage, bad: [String], good: [String]) throws -> Int64 {
        for (id, tokens) in [(Self.bad, bad), (Self.good, good)] {
            _ = try storage.insert(campaign(id), deliveries: tokens.map { NewDelivery(token: $0) }, now: Date().timeIntervalSince1970)
        }
        return try #require(try storage.campaign(id: Self.bad)).seq
    }

    /// The two campaigns stored before the server starts, the bad one's second segment
    /// damaged in the database (SQLite: 4 devices a segment, one byte flipped; PostgreSQL:
    /// 1,024 a segment, the row truncated). Returns the storage section, the bad campaign's
    /// tokens and the indices of its damaged segment.
    static func prepare(_ backend: Backend, folder: URL) throws -> (storage: String, bad: [String], damaged: Range<Int>) {
        switch backend {
        case .sqlite:
            let path = folder.appendingPathComponent("gateway.db").path
            let bad = SharedTokenCLITests.tokens(41, 12)
            let seq = try insert(try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false, segmentSize: 4)),
                                 bad: bad, good: SharedTokenCLITests.tokens(42, 10))
            let db = try SQLiteDatabase(path: path)
            let read = try db.statement("SELECT tokens FROM segments WHERE campaign = ? AND seg = 1").bind(.int(seq))
            #expect(try read.step())
            var tokens = read.blob(0)
            read.reset()
            tokens[5] ^= 0x01
            try db.statement("UPDATE segments SET tokens = ? WHERE campaign = ? AND seg = 1").bind(.blob(tokens), .int(seq)).run()
            return (#"{"path": "\#(path)"}"#, bad, 4..<8)
        case .postgres:
            let url = try PostgresCluster.shared().newDatabaseURL()
            let bad = SharedTokenCLITests.tokens(41, 1100)
            let seq = try insert(try PostgresCampaignStorage(options: .init(url: url, poolSize: 1, instance: "prepare/1/0", clock: SystemClock())),
                                 bad: bad, good: SharedTokenCLITests.tokens(42, 10))
            let db = try PGConnection(url: url, password: nil, connectTimeoutSeconds: 5)
            try db.execute("UPDATE segments SET tokens = substring(tokens FROM 1 FOR 100) WHERE campaign = $1 AND seg = 1", [.int(seq)])
            return (#"{"url": "\#(url)", "poolSize": 3}"#, bad, 1024..<1100)
        }
    }

    @Test(arguments: Backend.allCases)
    func theCampaignFailsLoggedOnceAndListedByReadyzWhileTheOtherIsDelivered(_ backend: Backend) throws {
        let fake = try FakeAPNsServer(scriptJSON: "{}")
        defer { fake.stop() }
        let (storage, bad, damaged) = try Self.prepare(backend, folder: fake.directory)
        let good = SharedTokenCLITests.tokens(42, 10)

        let server = try ServeProcess(config: try fake.gatewayConfig(database: "", inFlight: 40, storage: storage))
        defer { _ = server.terminate() }
        let logged = "campaign \(Self.bad) failed"
        #expect(eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(Self.good)")?["status"]?.stringValue == "completed"
                && server.object("GET", "/v1/campaigns/\(Self.bad)")?["finished_at"]?.stringValue != nil
                && server.stderrText.contains(logged)
        }, "\(server.stderrText)")

        let failed = try #require(server.object("GET", "/v1/campaigns/\(Self.bad)"))
        let failure = failed["failure"]?.stringValue ?? ""
        #expect(failure.contains("segment 1 of campaign") && failure.contains("does not decode"), "\(failed)")
        #expect(backend != .sqlite || failure.contains("checksum mismatch"), "\(failure)")
        #expect((failed["counts"]?.objectValue?["failed"]?.int64Value ?? 0) >= Int64(damaged.count), "\(failed)")
        let delivered = try #require(server.object("GET", "/v1/campaigns/\(Self.good)"))
        #expect(delivered["counts"]?.objectValue?["delivered"]?.int64Value == 10, "\(delivered)")

        // Ready (one bad campaign takes no instance out of service), and the check says which and why.
        let ready = try #require(server.request("GET", "/readyz"))
        #expect(ready.status == 200)
        let body = try #require(try JSONParser().parse(ready.body).objectValue)
        #expect(body["status"]?.stringValue == "ready")
        let segments = body["checks"]?.objectValue?["segments"]?.stringValue ?? ""
        #expect(segments.hasPrefix("1 campaign failed in the last hour") && segments.contains(Self.bad)
                && segments.contains(failure) && !segments.contains(Self.good), "\(body)")

        // Every request carried a stored token: none of the damaged segment's, all of the other campaign's.
        let sent = fake.received().compactMap { $0.string("token") }
        #expect(Set(sent).isSubset(of: Set(bad + good)), "a request with a token that was never stored")
        #expect(Set(sent).isDisjoint(with: bad[damaged]), "nothing of the segment that does not decode")
        #expect(Set(good).isSubset(of: Set(sent)))

        // Logged once, at error level, however many rounds the monitor ran since (it reads once a second).
        Thread.sleep(forTimeInterval: 2.5)
        let lines = server.stderrText.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)).objectValue }
            .filter { $0.string("message")?.contains(logged) == true }
        #expect(lines.count == 1, "\(server.stderrText)")
        #expect(lines.first?.string("level") == "error" && lines.first?.string("message")?.contains(failure) == true)
        #expect(server.request("GET", "/readyz")?.status == 200)
    }
}
