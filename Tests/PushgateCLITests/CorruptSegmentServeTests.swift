import Foundation
@testable import Storage
import StrictJSON
import Testing
import TestSupport

/// A stored segment that does not decode, through `pushgate serve`: its campaign fails (one
/// error line in the log, listed by `/readyz`, which stays 200), nothing of the segment
/// reaches APNs, and the other campaign is delivered.
@Suite(.serialized) struct CorruptSegmentServeTests {
    static let bad = "corrupt-campaign"
    static let good = "intact-campaign"

    /// Two campaigns of 4 devices per segment stored before the server starts; one byte of
    /// the bad one's second segment flipped in the file, as disk damage would.
    static func storeCampaigns(database: String, bad: [String], good: [String]) throws {
        let storage = try SQLiteCampaignStorage(path: database, options: .init(synchronousFull: false, segmentSize: 4))
        for (id, tokens) in [(Self.bad, bad), (Self.good, good)] {
            let campaign = NewCampaign(id: id, createdAt: Date().timeIntervalSince1970, dryRun: false,
                                       message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                       body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
            _ = try storage.insert(campaign, deliveries: tokens.map { NewDelivery(token: $0) }, now: Date().timeIntervalSince1970)
        }
        let seq = try #require(try storage.campaign(id: Self.bad)).seq
        let db = try SQLiteDatabase(path: database)
        let read = try db.statement("SELECT tokens FROM segments WHERE campaign = ? AND seg = 1").bind(.int(seq))
        #expect(try read.step())
        var tokens = read.blob(0)
        read.reset()
        tokens[5] ^= 0x01
        try db.statement("UPDATE segments SET tokens = ? WHERE campaign = ? AND seg = 1").bind(.blob(tokens), .int(seq)).run()
    }

    @Test func theCampaignFailsLoggedOnceAndListedByReadyzWhileTheOtherIsDelivered() throws {
        let fake = try FakeAPNsServer(scriptJSON: "{}")
        defer { fake.stop() }
        let database = fake.directory.appendingPathComponent("gateway.db").path
        let bad = SharedTokenCLITests.tokens(41, 12)
        let good = SharedTokenCLITests.tokens(42, 10)
        try Self.storeCampaigns(database: database, bad: bad, good: good)

        let server = try ServeProcess(config: try fake.gatewayConfig(database: database, inFlight: 40))
        defer { _ = server.terminate() }
        let logged = "campaign \(Self.bad) failed"
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(Self.good)")?["status"]?.stringValue == "completed"
                && server.object("GET", "/v1/campaigns/\(Self.bad)")?["finished_at"]?.stringValue != nil
                && server.stderrText.contains(logged)
        }, "\(server.stderrText)")

        let failed = try #require(server.object("GET", "/v1/campaigns/\(Self.bad)"))
        let failure = failed["failure"]?.stringValue ?? ""
        #expect(failure.contains("segment 1 of campaign") && failure.contains("does not decode: checksum mismatch"), "\(failed)")
        #expect((failed["counts"]?.objectValue?["failed"]?.int64Value ?? 0) >= 8, "\(failed)")
        let delivered = try #require(server.object("GET", "/v1/campaigns/\(Self.good)"))
        #expect(delivered["counts"]?.objectValue?["delivered"]?.int64Value == 10, "\(delivered)")

        // Ready (one bad campaign takes no instance out of service), and the check says which and why.
        let ready = try #require(server.request("GET", "/readyz"))
        #expect(ready.status == 200)
        let body = try #require(try JSONParser().parse(ready.body).objectValue)
        #expect(body["status"]?.stringValue == "ready")
        let segments = body["checks"]?.objectValue?["segments"]?.stringValue ?? ""
        #expect(segments.hasPrefix("1 campaign failed in the last hour") && segments.contains(Self.bad)
                && segments.contains("checksum mismatch") && !segments.contains(Self.good), "\(body)")

        // Every request carried a stored token: none of the corrupt segment's, all of the other campaign's.
        let sent = fake.received().compactMap { $0.string("token") }
        #expect(Set(sent).isSubset(of: Set(bad + good)), "\(sent)")
        #expect(Set(sent).isDisjoint(with: bad[4..<8]), "nothing of the segment that does not decode")
        #expect(Set(good).isSubset(of: Set(sent)))

        // Logged once, at error level, however many rounds the monitor ran since (it reads once a second).
        Thread.sleep(forTimeInterval: 2.5)
        let lines = server.stderrText.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)).objectValue }
            .filter { $0.string("message")?.contains(logged) == true }
        #expect(lines.count == 1, "\(server.stderrText)")
        #expect(lines.first?.string("level") == "error" && lines.first?.string("message")?.contains("checksum mismatch") == true)
        #expect(server.request("GET", "/readyz")?.status == 200)
    }
}
