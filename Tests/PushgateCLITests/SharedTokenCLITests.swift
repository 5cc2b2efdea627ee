import Foundation
import StrictJSON
import Testing
import TestSupport

/// Apple refuses a key's provider token replaced more often than every 20 minutes. The
/// fake enforces that rule here; every process shares the token through the storage, so
/// back-to-back sends, a kill -9, a restart and a graceful restart all sign with one token.
@Suite(.serialized) struct SharedTokenCLITests {
    static func tokens(_ prefix: Int, _ count: Int) -> [String] {
        (0..<count).map { n in
            let hex = String(prefix * 1_000_000 + n, radix: 16)
            return String(repeating: "d", count: 64 - hex.count) + hex
        }
    }

    func expectOneTokenAndNoRefusal(_ fake: FakeAPNsServer) {
        #expect(fake.tokensSeen().count == 1, "the fake saw \(fake.tokensSeen().count) provider tokens")
        #expect(!fake.log().contains { $0.string("reason") == "TooManyProviderTokenUpdates" })
    }

    @Test func twoSendsWithinAMinuteDeliverEverythingWithOneToken() throws {
        let fake = try FakeAPNsServer(tokenUpdateWindow: 1200)
        defer { fake.stop() }
        let database = fake.directory.appendingPathComponent("gateway.db").path
        let configPath = try fake.gatewayConfig(database: database, inFlight: 40)
        for run in 1...2 {
            let campaign = fake.directory.appendingPathComponent("campaign\(run).json")
            try Data(CrashRecoveryTests.campaign(Self.tokens(run, 50))).write(to: campaign)
            let result = try CLI.run(["send", "--campaign", campaign.path, "--config", configPath],
                                     environment: SendCommandTests.environment())
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            #expect(result.stdout.contains("delivered      50"), "run \(run): \(result.stdout)")
            #expect(!result.stderr.contains("eyJ") && !result.stdout.contains("eyJ"), "the token is never printed")
        }
        #expect(fake.answers().filter { $0.status == 200 }.count == 100)
        expectOneTokenAndNoRefusal(fake)
        // The token is a credential: the database holding it is readable by its owner only.
        let mode = try FileManager.default.attributesOfItem(atPath: database)[.posixPermissions] as? NSNumber
        #expect((mode?.intValue ?? 0o777) & 0o077 == 0)
    }

    @Test func serveKilledRestartedAndRestartedGracefullySignsWithOneToken() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"delayMs": 3}"#, tokenUpdateWindow: 1200)
        defer { fake.stop() }
        let database = fake.directory.appendingPathComponent("gateway.db").path
        let configPath = try fake.gatewayConfig(database: database, inFlight: 40)
        let first = Self.tokens(1, 1500)

        let server = try ServeProcess(config: configPath)
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: CrashRecoveryTests.campaign(first)))
        #expect(accepted.status == 202)
        let id = try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)
        _ = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(2)) { fake.answeredCount() >= 300 }
        server.kill9()
        #expect(fake.answeredCount() < first.count, "the campaign finished before the kill; the test proved nothing")

        let restarted = try ServeProcess(config: configPath)
        #expect(waitForCompletion(restarted, id))
        #expect(restarted.terminate() == 0)

        // A deploy: a graceful stop and a new process, which sends a new campaign.
        let deployed = try ServeProcess(config: configPath)
        let second = try #require(deployed.request("POST", "/v1/campaigns", json: CrashRecoveryTests.campaign(Self.tokens(2, 200))))
        #expect(second.status == 202)
        let secondID = try #require(try JSONParser().parse(second.body).objectValue?["id"]?.stringValue)
        #expect(waitForCompletion(deployed, secondID))
        #expect(deployed.terminate() == 0)

        let delivered = Set(fake.answers().filter { $0.status == 200 }.map(\.token))
        #expect(delivered.count == 1700, "every device delivered")
        expectOneTokenAndNoRefusal(fake)
        // The token is a credential: no serve wrote it (a compact JWT starts "eyJ") to its log.
        for (name, process) in [("killed", server), ("restarted", restarted), ("deployed", deployed)] {
            // The pipe is read on its own thread: wait for the last line of a graceful stop.
            #expect(name == "killed" || eventuallyBlocking(timeout: .seconds(30)) { process.stderrText.contains("pushgate: stopped") },
                    "\(name): its whole log was read")
            #expect(!process.stderrText.contains("eyJ"), "\(name) logged the provider token")
        }
    }

    func waitForCompletion(_ server: ServeProcess, _ id: String) -> Bool {
        eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
    }
}
