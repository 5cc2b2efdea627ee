import Foundation
import StrictJSON
import Testing
import TestSupport

/// APNs refusing the signing key, through the commands: `send` ends with one error and
/// exit 2 (devices not sent), `serve` keeps the campaign queued without spending attempts
/// and says on `/readyz` and `/metrics` which key and why.
@Suite(.serialized) struct KeyStopCLITests {
    /// A send signing through its own storage: the shipped one is shared by every CLI test,
    /// and a token another test stored there is one more to try on ExpiredProviderToken.
    static func environment(_ fake: FakeAPNsServer) -> [String: String] {
        var env = SendCommandTests.realSend(fake.url, caFile: fake.caFile)
        env["PUSHGATE_STORAGE_PATH"] = fake.directory.appendingPathComponent("send.db").path
        return env
    }

    static func devicesFile(_ count: Int) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try (1...count).map { String(repeating: "0", count: 64 - String($0, radix: 16).count) + String($0, radix: 16) }
            .joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test(arguments: [("InvalidProviderToken", #"{"keyProblem": "InvalidProviderToken"}"#, "revoked key"),
                      ("BadEnvironmentKeyInToken", #"{"keyProblem": "BadEnvironmentKeyInToken"}"#, "apns.environment"),
                      ("ExpiredProviderToken", #"{"appleClockAheadSeconds": 7200}"#, "clock skew")])
    func sendEndsWithOneErrorAndExitTwo(reason: String, script: String, hint: String) throws {
        let fake = try FakeAPNsServer(scriptJSON: script)
        defer { fake.stop() }
        let devices = try Self.devicesFile(1_000)
        let r = try CLI.run(["send", "--campaign", SendCommandTests.campaign, "--devices", devices.path],
                            environment: Self.environment(fake))
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("pushgate send: APNs answered 403 \(reason)"), "\(r.stderr)")
        #expect(r.stderr.contains("key KEY1234567 (team TEAM123456)") && r.stderr.contains(hint), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "APNs answered").count == 2, "one message, not one per device: \(r.stderr)")
        #expect(r.stdout.contains("not sent       1004") && r.stdout.contains("failed         0"), "\(r.stdout)")
        // At most one window: connections × maxConcurrentStreams (2 × 100 by default); the
        // requests queued behind it (send keeps twice that in flight) are taken back. An
        // ExpiredProviderToken stops the key only once the client found that no new token
        // cures it (a storage read): what was written meanwhile goes too.
        let window = reason == "ExpiredProviderToken" ? 400 : 200
        #expect(fake.received().count <= window, "only the first window reached APNs: \(fake.received().count)")
    }

    @Test func sendJSONReportsEachDeviceNotSent() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"keyProblem": "UnrelatedKeyIdInToken"}"#)
        defer { fake.stop() }
        let r = try CLI.run(["send", "--campaign", SendCommandTests.campaign, "--json"],
                            environment: Self.environment(fake))
        #expect(r.status == 2)
        let lines = r.stdout.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)).objectValue }
        #expect(lines.count == 4 && lines.allSatisfy {
            $0.string("result") == "not-sent" && $0.string("reason") == "keyStopped"
                && $0.string("message")?.contains("UnrelatedKeyIdInToken") == true
        }, "\(r.stdout)")
    }

    @Test func serveKeepsTheCampaignQueuedAndReadyzNamesTheKey() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"keyProblem": "InvalidProviderToken"}"#)
        defer { fake.stop() }
        let database = fake.directory.appendingPathComponent("gateway.db").path
        let config = try fake.gatewayConfig(database: database, inFlight: 40)
        let server = try ServeProcess(config: config)
        defer { _ = server.terminate() }
        let tokens = SharedTokenCLITests.tokens(7, 300)
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: CrashRecoveryTests.campaign(tokens)))
        #expect(accepted.status == 202)
        let id = try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)

        let stopped = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            server.request("GET", "/readyz")?.status == 503
        }
        #expect(stopped)
        let ready = try #require(server.object("GET", "/readyz"))
        let check = ready["checks"]?.objectValue?["signing_key"]?.stringValue ?? ""
        #expect(check.contains("APNs answered 403 InvalidProviderToken") && check.contains("KEY1234567") && check.contains("next probe at"),
                "\(ready)")
        let metrics = String(decoding: server.request("GET", "/metrics")?.body ?? [], as: UTF8.self)
        #expect(metrics.contains(#"pushgate_apns_key_stopped{key_id="KEY1234567",reason="InvalidProviderToken"} 1"#), "\(metrics)")

        // Queued, not failed, and nothing more reaches APNs while the key is stopped (once
        // the sends already claimed and on their way have arrived).
        Thread.sleep(forTimeInterval: 0.5)
        let sentAtStop = fake.received().count
        #expect(sentAtStop <= 40, "at most the in-flight window reached APNs: \(sentAtStop)")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(fake.received().count == sentAtStop)
        let campaign = try #require(server.object("GET", "/v1/campaigns/\(id)"))
        let counts = campaign["counts"]?.objectValue
        #expect(campaign["status"]?.stringValue != "completed")
        #expect((counts?["failed"]?.int64Value ?? -1) == 0, "\(campaign)")
        #expect((counts?["delivered"]?.int64Value ?? -1) == 0)
        let page = try #require(server.object("GET", "/v1/campaigns/\(id)?per_page=500"))
        let rows = page["results"]?.arrayValue ?? []
        #expect(rows.count == 300 && rows.allSatisfy { ($0.objectValue?["attempts"]?.int64Value ?? -1) == 0 },
                "no device spent an attempt")
    }
}
