import APNsCore
import APNs
import Foundation
import Payloads
import StrictJSON
import TestSupport
import Testing
import Timing

/// Several apps' senders: one provider token per (team, key), one connection pool per
/// (APNs URL, team, key), and each app's campaigns with its own topic and credentials, checked
/// by a fake APNs that knows which topics each key may push to.
@Suite(.serialized) struct APNsFleetTests {
    static func request(topic: String, _ index: Int) -> APNsRequest {
        let token = TestRequests.token(index)
        return APNsRequest(deviceToken: token, path: "/3/device/" + token, pushType: .alert, topic: topic, priority: 10,
                           body: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    }

    static func configuration(_ fake: FakeAPNs, team: String, key: String, file: String,
                              environments: [APNsEnvironment] = [.sandbox]) -> APNsConfiguration {
        // One connection per pool, so that a pool is one connection in the fake's log.
        var c = APNsConfiguration(environment: environments[0], url: fake.url, caFile: fake.caFile, teamId: team, keyId: key, keyFile: file,
                                  connections: 1)
        c.environments = environments
        return c
    }

    @Test func eachAppSendsWithItsOwnKeyAndTopicAndTeamsDoNotShareAPool() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newsKey = try FakeAPNsServer.Key.generate(in: folder, name: "news")
        let fake = try FakeAPNs(keys: [
            FakeAPNsServer.Key(teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, keyFile: FakeAPNs.keyFile, topics: ["com.example.shop", "com.example.club"]),
            FakeAPNsServer.Key(teamId: "Z9Y8X7W6V5", keyId: "NEWSKEY001", keyFile: newsKey, topics: ["org.example.news"]),
        ])
        defer { fake.stop() }
        let fleet = try APNsFleet(apps: [
            .init(name: "shop", configuration: Self.configuration(fake, team: FakeAPNs.teamId, key: FakeAPNs.keyId, file: FakeAPNs.keyFile)),
            // Same team and key as shop: its token and its connection pool are shop's.
            .init(name: "club", configuration: Self.configuration(fake, team: FakeAPNs.teamId, key: FakeAPNs.keyId, file: FakeAPNs.keyFile)),
            .init(name: "news", configuration: Self.configuration(fake, team: "Z9Y8X7W6V5", key: "NEWSKEY001", file: newsKey,
                                                                   environments: [.production, .sandbox])),
        ], clock: SystemClock())
        defer { fleet.shutdown() }
        #expect(fleet.tokens.count == 2, "one provider token per (team, key)")
        #expect(fleet.transports.count == 2, "one pool per key (the URL override is the same for both environments)")

        let shop = await fleet.sender(app: "shop", environment: "sandbox", dryRun: false).send(Self.request(topic: "com.example.shop", 1))
        let club = await fleet.sender(app: "club", environment: "sandbox", dryRun: false).send(Self.request(topic: "com.example.club", 2))
        let news = await fleet.sender(app: "news", environment: "production", dryRun: false).send(Self.request(topic: "org.example.news", 3))
        for result in [shop, club, news] {
            guard case .delivered = result else { Issue.record("not delivered: \(result)"); continue }
        }
        // The news key may not push to the shop's topic: APNs says TopicDisallowed.
        let wrong = await fleet.sender(app: "news", environment: "sandbox", dryRun: false).send(Self.request(topic: "com.example.shop", 4))
        guard case .failed(400, let reason, _) = wrong else { Issue.record("expected 400, got \(wrong)"); return }
        #expect(reason.rawValue == "TopicDisallowed")
        let log = fake.log()
        #expect(log.map { $0["kid"]?.stringValue ?? "" } == [FakeAPNs.keyId, FakeAPNs.keyId, "NEWSKEY001", "NEWSKEY001"])
        // shop and club share their pool's connection(s); news never uses them. (Under load
        // a pool may open a second connection when a handshake is slow, so not "== 2".)
        let shopConnections = Set(log.filter { $0.string("kid") == FakeAPNs.keyId }.compactMap { $0.int("connection") })
        let newsConnections = Set(log.filter { $0.string("kid") == "NEWSKEY001" }.compactMap { $0.int("connection") })
        #expect(!shopConnections.isEmpty && shopConnections.isDisjoint(with: newsConnections), "\(shopConnections) \(newsConnections)")
    }

    /// APNs ties a connection to the key of its first token (UnrelatedKeyIdInToken for any
    /// other, even of the same team, which the fake enforces): two keys, two pools.
    @Test func twoKeysOfOneTeamNeverShareAConnection() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let promoKey = try FakeAPNsServer.Key.generate(in: folder, name: "promo")
        let fake = try FakeAPNs(keys: [
            FakeAPNsServer.Key(teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, keyFile: FakeAPNs.keyFile, topics: ["com.example.shop"]),
            FakeAPNsServer.Key(teamId: FakeAPNs.teamId, keyId: "PROMOKEY01", keyFile: promoKey, topics: ["com.example.promo"]),
        ])
        defer { fake.stop() }
        let fleet = try APNsFleet(apps: [
            .init(name: "shop", configuration: Self.configuration(fake, team: FakeAPNs.teamId, key: FakeAPNs.keyId, file: FakeAPNs.keyFile)),
            .init(name: "promo", configuration: Self.configuration(fake, team: FakeAPNs.teamId, key: "PROMOKEY01", file: promoKey)),
        ], clock: SystemClock())
        defer { fleet.shutdown() }
        #expect(fleet.tokens.count == 2)
        #expect(fleet.transports.count == 2, "one pool per key, though the team is the same")
        let shop = fleet.sender(app: "shop", environment: "sandbox", dryRun: false)
        let promo = fleet.sender(app: "promo", environment: "sandbox", dryRun: false)
        // Interleaved, so that a shared connection would carry both keys.
        for i in 0..<6 {
            let result = i % 2 == 0 ? await shop.send(Self.request(topic: "com.example.shop", i))
                                    : await promo.send(Self.request(topic: "com.example.promo", i))
            guard case .delivered = result else { Issue.record("\(i) not delivered: \(result)"); continue }
        }
        let log = fake.log()
        #expect(log.allSatisfy { $0.int("status") == 200 }, "\(log.compactMap { $0.string("reason") })")
        var keysPerConnection: [Int: Set<String>] = [:]
        for entry in log { keysPerConnection[entry.int("connection") ?? 0, default: []].insert(entry.string("kid") ?? "") }
        // Every connection carried one key, and both keys were sent. (Not "two connections":
        // under load a pool may open a second one when a handshake is slow.)
        #expect(keysPerConnection.values.allSatisfy { $0.count == 1 }
                && Set(keysPerConnection.values.flatMap { $0 }) == [FakeAPNs.keyId, "PROMOKEY01"], "\(keysPerConnection)")
    }

    @Test func anAppWithoutItsEnvironmentFallsBackToTheFirstAppsSender() throws {
        var c = APNsConfiguration(dryRun: true)
        c.environments = [.sandbox]
        let fleet = try APNsFleet(apps: [.init(name: "shop", configuration: c), .init(name: "news", configuration: c)], clock: SystemClock())
        #expect(fleet.tokens.count == 1, "one ephemeral key for every dry-run app")
        #expect(fleet.transports.isEmpty)
        #expect(fleet.sender(app: "gone", environment: "sandbox", dryRun: false) is DryRunSender)
    }

    /// A held key holds back only the apps that sign with it: the other apps' senders are
    /// free, and the fleet says which apps wait and why.
    @Test func aHeldKeyHoldsOnlyItsOwnApps() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newsKey = try FakeAPNsServer.Key.generate(in: folder, name: "news")
        let fake = try FakeAPNs(keys: [
            FakeAPNsServer.Key(teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, keyFile: FakeAPNs.keyFile, topics: ["com.example.shop"]),
            FakeAPNsServer.Key(teamId: "Z9Y8X7W6V5", keyId: "NEWSKEY001", keyFile: newsKey, topics: ["org.example.news"]),
        ])
        defer { fake.stop() }
        let fleet = try APNsFleet(apps: [
            .init(name: "shop", configuration: Self.configuration(fake, team: FakeAPNs.teamId, key: FakeAPNs.keyId, file: FakeAPNs.keyFile)),
            .init(name: "news", configuration: Self.configuration(fake, team: "Z9Y8X7W6V5", key: "NEWSKEY001", file: newsKey,
                                                                   environments: [.production, .sandbox])),
        ], clock: SystemClock())
        defer { fleet.shutdown() }
        let now = Date().timeIntervalSince1970
        #expect(fleet.heldUntil(app: "news", environment: "sandbox", dryRun: false, now: now) == nil)
        #expect(fleet.heldApps().isEmpty)
        // APNs answered TooManyProviderTokenUpdates for the news key.
        let news = try #require(fleet.tokens.first { $0.identity.keyId == "NEWSKEY001" })
        let until = news.pauseAfterTooManyUpdates(try news.currentToken())
        for environment in ["production", "sandbox"] {
            #expect(fleet.heldUntil(app: "news", environment: environment, dryRun: false, now: now) == Double(until))
        }
        #expect(fleet.heldUntil(app: "news", environment: "sandbox", dryRun: true, now: now) == nil, "a dry run is never held")
        #expect(fleet.heldUntil(app: "shop", environment: "sandbox", dryRun: false, now: now) == nil, "the shop's key is its own")
        let held = fleet.heldApps()
        #expect(held.map(\.app) == ["news", "news"])
        #expect(held.allSatisfy { $0.why.contains("NEWSKEY001") }, "\(held)")
        // A row naming no configured app goes out with the first app's sender, and waits with it.
        #expect(fleet.heldUntil(app: "", environment: "", dryRun: false, now: now) == nil)
    }
}
