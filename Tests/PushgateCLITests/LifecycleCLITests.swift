import Foundation
import StrictJSON
import Testing
import TestSupport

/// The lifecycle with the built binary, the fake APNs and real restarts: `pushgate
/// campaigns pause|resume|cancel` next to a running `serve` and with none, schedule and
/// expiry across a restart; the fake's own log is the judge of what was sent when.
@Suite(.serialized) struct LifecycleCLITests {
    static let inFlight = 10

    static func token(_ campaign: Int, _ n: Int) -> String {
        let hex = String(campaign * 1_000_000 + n, radix: 16)
        return String(repeating: "b", count: 64 - hex.count) + hex
    }

    static func campaign(_ tokens: [String], extra: String = "") -> [UInt8] {
        Array(("{\"alert\":{\"title\":\"Sale\",\"body\":\"Today only\"}\(extra),\"devices\":["
            + tokens.map { "\"\($0)\"" }.joined(separator: ",") + "]}").utf8)
    }

    static func post(_ server: ServeProcess, _ body: [UInt8]) throws -> String {
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: body))
        #expect(accepted.status == 202, "\(String(decoding: accepted.body, as: UTF8.self))")
        return try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)
    }

    static func time(_ offset: Double) -> String {
        var parts = tm()
        var seconds = time_t(Date().timeIntervalSince1970 + offset)
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    func campaigns(_ arguments: [String], config: String) throws -> CLIResult {
        try CLI.run(["campaigns"] + arguments + ["--config", config], environment: SendCommandTests.environment())
    }

    @Test func pauseResumeAndCancelFromTheCLIWhileServeRunsAndAcrossRestarts() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 40}"#)
        let database = fake.directory.appendingPathComponent("pushgate.db").path
        let config = try fake.gatewayConfig(database: database, inFlight: Self.inFlight)
        let tokens = (0..<2000).map { Self.token(1, $0) }

        var server = try ServeProcess(config: config)
        let id = try Self.post(server, Self.campaign(tokens))
        _ = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(5)) { fake.answeredCount() >= 40 }

        let paused = try campaigns(["pause", id], config: config)
        #expect(paused.status == 0, "\(paused.stderr)")
        #expect(paused.stdout == "campaign \(id) paused\n")
        let atPause = fake.answeredCount()
        #expect(atPause < tokens.count, "the campaign finished before the pause; the test proved nothing")
        Thread.sleep(forTimeInterval: 0.8)
        #expect(fake.answeredCount() <= atPause + Self.inFlight, "only the in-flight window after the pause")
        let twice = try campaigns(["pause", id], config: config)
        #expect(twice.status == 0 && twice.stdout.contains("(it already was)"))

        // kill -9 and a new server: still paused, nothing sent.
        server.kill9()
        let pausedCount = fake.answeredCount()
        server = try ServeProcess(config: config)
        Thread.sleep(forTimeInterval: 0.8)
        #expect(fake.answeredCount() == pausedCount)
        #expect(server.object("GET", "/v1/campaigns/\(id)")?["status"] == .string("paused"))

        let resumed = try campaigns(["resume", id], config: config)
        #expect(resumed.status == 0 && resumed.stdout == "campaign \(id) sending\n", "\(resumed.stdout)\(resumed.stderr)")
        _ = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(5)) { fake.answeredCount() >= pausedCount + 40 }
        let cancelled = try campaigns(["cancel", id], config: config)
        let atCancel = fake.answeredCount()
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(cancelled.stdout.hasPrefix("campaign \(id) cancelled: ") && cancelled.stdout.contains("of 2000 devices not sent"), "\(cancelled.stdout)")
        #expect(atCancel < tokens.count)
        let finished = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(id)")?["finished_at"] != .null
        }
        #expect(finished)
        Thread.sleep(forTimeInterval: 0.3)
        let sentInTotal = fake.answeredCount()
        #expect(sentInTotal <= atCancel + Self.inFlight, "nothing after the cancel but the in-flight window")
        let status = try #require(server.object("GET", "/v1/campaigns/\(id)"))
        #expect(status["status"] == .string("cancelled"))
        #expect(status["not_sent"]?.int64Value == Int64(tokens.count - Set(fake.answers().map(\.token)).count))

        // A graceful restart: the cancel holds.
        #expect(server.terminate() == 0)
        server = try ServeProcess(config: config)
        Thread.sleep(forTimeInterval: 0.6)
        #expect(fake.answeredCount() == sentInTotal)
        #expect(server.object("GET", "/v1/campaigns/\(id)")?["status"] == .string("cancelled"))
        #expect(server.terminate() == 0)

        // With no server running, the CLI answers the same way.
        let again = try campaigns(["cancel", id], config: config)
        #expect(again.status == 0 && again.stdout.contains("(it already was)"))
        let refused = try campaigns(["pause", id], config: config)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("campaign \(id) is cancelled; it cannot be paused"), "\(refused.stderr)")
        let json = try campaigns(["cancel", id, "--json"], config: config)
        #expect(try JSONParser().parse(json.stdout).objectValue?["status"] == .string("cancelled"))
        let unknown = try campaigns(["cancel", "no-such-campaign"], config: config)
        #expect(unknown.status == 1 && unknown.stderr.contains("no campaign \"no-such-campaign\""))
        #expect(try campaigns(["cancel"], config: config).status == 2)
        let listed = try campaigns([], config: config)
        #expect(listed.stdout.contains("cancelled"), "\(listed.stdout)")
    }

    @Test func aCancelWithNoServerEndsEveryUnsentDeviceAtOnce() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 1}"#)
        let database = fake.directory.appendingPathComponent("pushgate.db").path
        let config = try fake.gatewayConfig(database: database, inFlight: Self.inFlight)
        let server = try ServeProcess(config: config)
        let id = try Self.post(server, Self.campaign((0..<50).map { Self.token(2, $0) }, extra: #","send_at":"\#(Self.time(3600))""#))
        #expect(server.terminate() == 0)
        let cancelled = try campaigns(["cancel", id], config: config)
        #expect(cancelled.stdout == "campaign \(id) cancelled: 50 of 50 devices not sent\n", "\(cancelled.stdout)\(cancelled.stderr)")
        let listed = try campaigns(["--json"], config: config)
        let first = try JSONParser().parse(listed.stdout).objectValue?["campaigns"]?.arrayValue?.first?.objectValue
        #expect(first?["counts"]?.objectValue?["cancelled"] == .number("50"))
        #expect(first?["finished_at"] != .null)
        #expect(fake.answeredCount() == 0)
    }

    @Test func scheduleAndExpiryHoldAcrossARestart() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 1}"#)
        let database = fake.directory.appendingPathComponent("pushgate.db").path
        let config = try fake.gatewayConfig(database: database, inFlight: Self.inFlight)
        var server = try ServeProcess(config: config)
        let scheduled = (0..<20).map { Self.token(3, $0) }
        let expiring = (0..<20).map { Self.token(4, $0) }
        let scheduledID = try Self.post(server, Self.campaign(scheduled, extra: #","send_at":"\#(Self.time(3))""#))
        // Scheduled too, but it expires before the server is back.
        let expiringID = try Self.post(server, Self.campaign(expiring, extra: #","send_at":"\#(Self.time(2))","expires_at":"\#(Self.time(3))""#))
        #expect(server.object("GET", "/v1/campaigns/\(scheduledID)")?["status"] == .string("scheduled"))
        server.kill9()
        Thread.sleep(forTimeInterval: 4.2)
        #expect(fake.answeredCount() == 0, "nothing before send_at")
        server = try ServeProcess(config: config)
        let done = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(scheduledID)")?["status"] == .string("completed")
                && server.object("GET", "/v1/campaigns/\(expiringID)")?["finished_at"] != .null
        }
        #expect(done)
        let expired = try #require(server.object("GET", "/v1/campaigns/\(expiringID)"))
        #expect(expired["status"] == .string("expired"))
        #expect(expired["counts"]?.objectValue?["expired"] == .number("20"))
        #expect(server.terminate() == 0)
        #expect(Set(fake.answers().map(\.token)) == Set(scheduled), "the scheduled campaign sent, the expired one not")
    }
}
