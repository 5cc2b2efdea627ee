import Foundation
import StrictJSON
import Testing
import TestSupport

/// kill -9 in the middle of a campaign, restart, and check against the fake APNs's own
/// log that every device was answered 200 and that none was sent twice beyond the
/// dispatcher's in-flight window.
@Suite(.serialized) struct CrashRecoveryTests {
    static let inFlight = 40

    func config(fake: FakeAPNsProcess, database: String) throws -> String {
        try fake.gatewayConfig(database: database, inFlight: Self.inFlight)
    }

    static func token(_ campaign: Int, _ n: Int) -> String {
        let hex = String(campaign * 1_000_000 + n, radix: 16)
        return String(repeating: "c", count: 64 - hex.count) + hex
    }

    static func campaign(_ tokens: [String]) -> [UInt8] {
        Array(("{\"alert\":{\"title\":\"Sale\",\"body\":\"Today only\"},\"deeplink\":\"https://example.com/product/42\",\"devices\":["
            + tokens.map { "\"\($0)\"" }.joined(separator: ",") + "]}").utf8)
    }

    @Test func killedMidCampaignEveryDeviceIsAnsweredOnceOutsideTheInFlightWindow() throws {
        let fake = try FakeAPNsProcess(script: #"{"delayMs": 3}"#, tokenUpdateWindow: 1200)
        let database = fake.directory.appendingPathComponent("pushgate.db").path
        let configPath = try config(fake: fake, database: database)
        let first = (0..<3000).map { Self.token(1, $0) }
        let second = (0..<1000).map { Self.token(2, $0) }

        let server = try ServeProcess(config: configPath)
        var ids: [String] = []
        for tokens in [first, second] {
            let accepted = try #require(server.request("POST", "/v1/campaigns", json: Self.campaign(tokens)))
            #expect(accepted.status == 202)
            ids.append(try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue))
        }
        // Kill once a fair part has been answered, with most still to go.
        _ = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(2)) { fake.answeredCount() >= 800 }
        server.kill9()
        let answeredAtKill = fake.answeredCount()
        #expect(answeredAtKill >= 800)
        #expect(answeredAtKill < first.count + second.count, "the campaign finished before the kill; the test proved nothing")

        let restarted = try ServeProcess(config: configPath)
        let finished = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            ids.allSatisfy { restarted.object("GET", "/v1/campaigns/\($0)")?["status"]?.stringValue == "completed" }
        }
        #expect(finished)
        for (id, count) in zip(ids, [first.count, second.count]) {
            let counts = restarted.object("GET", "/v1/campaigns/\(id)")?["counts"]?.objectValue
            #expect(counts?["delivered"]?.int64Value == Int64(count))
        }
        #expect(restarted.terminate() == 0)

        let answers = fake.answers()
        var timesAnswered: [String: Int] = [:]
        for answer in answers where answer.status == 200 { timesAnswered[answer.token, default: 0] += 1 }
        #expect(Set(timesAnswered.keys) == Set(first + second), "every token reached")
        let duplicates = timesAnswered.values.reduce(0) { $0 + $1 - 1 }
        #expect(duplicates <= Self.inFlight, "\(duplicates) sent twice; the in-flight window is \(Self.inFlight)")
        #expect(answers.allSatisfy { $0.status == 200 })
    }
}
