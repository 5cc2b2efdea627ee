import Foundation
import StrictJSON
import Testing
import TestSupport

/// SIGTERM with a slow upload and unanswered sends in flight: one deadline for the whole
/// stop, new connections refused at once, no APNs request after the signal, exit 0 within
/// the deadline plus a second, and nothing lost at the next start.
@Suite(.serialized) struct StopDeadlineTests {
    static func config(fake: FakeAPNsServer, database: String, name: String) throws -> String {
        let root = TestPaths.packageRoot.path
        let text = """
        {"topic": "com.example.shop", "routes": "\(root)/config/routes.json", "templates": "\(root)/Templates",
         "apns": {"url": "https://127.0.0.1:\(fake.port)", "caFile": "\(fake.caFile)", "teamId": "\(FakeAPNsServer.teamId)",
                  "keyId": "\(FakeAPNsServer.keyId)", "keyFile": "\(FakeAPNsServer.keyFile)", "connections": 1},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off", "shutdownDeadlineSeconds": 1},
         "storage": {"path": "\(database)"},
         "dispatcher": {"inFlight": 20, "claimBatch": 20}}
        """
        let path = fake.directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aStopIsOneDeadlineAndSendsNothingAfterTheSignal() throws {
        // Every answer takes 3 s: the sends claimed before the signal are still unanswered
        // at the 1 s deadline.
        let slowFake = try FakeAPNsServer(scriptJSON: #"{"delayMs": 3000}"#)
        defer { slowFake.stop() }
        let database = slowFake.directory.appendingPathComponent("pushgate.db").path
        let server = try ServeProcess(config: try Self.config(fake: slowFake, database: database, name: "slow.json"))
        defer { if server.process.isRunning { server.kill9() } }
        let tokens = (0..<100).map { CrashRecoveryTests.token(7, $0) }
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: CrashRecoveryTests.campaign(tokens)))
        #expect(accepted.status == 202)
        let id = try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)
        #expect(eventuallyBlocking(timeout: .seconds(30)) { slowFake.received().count >= 20 }, "sends in flight")

        // A request still uploading its body when the signal comes.
        let upload = try #require(RawHTTPClient(port: server.port))
        #expect(upload.send("POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"alert\":"))
        Thread.sleep(forTimeInterval: 0.2)

        let signalAt = Date().timeIntervalSince1970
        kill(server.process.processIdentifier, SIGTERM)
        // Refused, not accepted and left hanging.
        #expect(eventuallyBlocking(timeout: .seconds(1), interval: .milliseconds(20)) { RawHTTPClient(port: server.port) == nil },
                "a new connection is refused once the stop began")
        server.process.waitUntilExit()
        let took = Date().timeIntervalSince1970 - signalAt
        #expect(server.process.terminationStatus == 0)
        #expect(took <= 2.0, "exit \(took) s after the signal; the deadline is 1 s")
        // What was on the wire arrived before the signal (a few ms of slack for the network).
        let late = slowFake.received().filter { ($0["time"]?.doubleValue ?? 0) > signalAt + 0.05 }
        #expect(late.isEmpty, "\(late.count) APNs requests after the signal")

        // The next start finishes the campaign: the unanswered leases were given back.
        let fastFake = try FakeAPNsServer(scriptJSON: "{}")
        defer { fastFake.stop() }
        let restarted = try ServeProcess(config: try Self.config(fake: fastFake, database: database, name: "fast.json"))
        let finished = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            restarted.object("GET", "/v1/campaigns/\(id)")?["status"]?.stringValue == "completed"
        }
        #expect(finished)
        #expect(restarted.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue?["delivered"]?.int64Value == 100)
        #expect(restarted.terminate() == 0)
    }
}
