import Foundation
import StrictJSON
import Testing
import TestSupport

@Suite struct SendCommandTests {
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/APNsTests/Fixtures")
    static let campaign = "config/campaigns/inline-alert.json"

    /// The environment without any PUSHGATE_APNS_* the developer may have set.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHGATE_APNS_") }
        env.merge(extra) { $1 }
        return env
    }

    @Test func dryRunWithTheShippedConfigSignsWithAnEphemeralKeyAndSaysSo() throws {
        let r = try CLI.run(["send", "--campaign", Self.campaign], environment: Self.environment())
        #expect(r.status == 0)
        #expect(r.stderr.contains("ephemeral P-256 key"))
        #expect(r.stdout.contains("dry run: nothing was sent"))
        #expect(r.stdout.contains("built          4"))
    }

    @Test func jsonDryRunShowsEachSignedRequestWithTheTokenRedacted() throws {
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--json"], environment: Self.environment())
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines {
            let object = try #require(try JSONParser().parse(String(line)).objectValue)
            #expect(object["result"] == .string("dry-run"))
            let request = try #require(object["request"]?.objectValue)
            let headers = try #require(request["headers"]?.objectValue)
            #expect(headers["authorization"]?.stringValue?.contains("redacted") == true)
            #expect(headers["apns-topic"] == .string("com.example.shop"))
            #expect(request["url"]?.stringValue?.hasPrefix("https://api.sandbox.push.apple.com/3/device/") == true)
        }
        #expect(!r.stdout.contains("eyJ"), "no JWT in the output")
    }

    @Test func invalidTokensInTheDevicesFileAreReportedByLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        let good = String(repeating: "ab", count: 32)
        try "\(good)\n\n# a comment\nnot-a-token\n\(good.uppercased())\n".write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path], environment: Self.environment())
        #expect(r.status == 1)
        #expect(r.stderr.contains(":4: not a device token"))
        #expect(r.stdout.contains("devices        7"))
        #expect(r.stdout.contains("invalidToken"))
        let json = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path, "--json"], environment: Self.environment())
        #expect(json.stdout.contains(#"{"line":4,"result":"invalid","code":"invalidToken""#))
    }

    @Test func anOverlongLineIsOneProblemAndLineNumbersStayRight() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        let good = String(repeating: "cd", count: 32)
        try "\(good)\n\(String(repeating: "f", count: 100_000))\n\(good)\nzz".write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path], environment: Self.environment())
        #expect(r.status == 1)
        #expect(r.stderr.contains(":2: not a device token: line longer than 4096 bytes"))
        #expect(r.stderr.contains(":4: not a device token: not hex"))
        #expect(r.stdout.contains("devices        8"))
    }

    @Test func usageAndConfigurationErrorsExitTwo() throws {
        #expect(try CLI.run(["send"]).status == 2)
        #expect(try CLI.run(["send", "--campaign", Self.campaign, "--bogus"]).status == 2)
        #expect(try CLI.run(["send", "--campaign", "/nonexistent.json"]).status == 2)
        let r = try CLI.run(["send", "--campaign", Self.campaign],
                            environment: Self.environment(["PUSHGATE_APNS_ENVIRONMENT": "staging"]))
        #expect(r.status == 2)
        #expect(r.stderr.contains("PUSHGATE_APNS_ENVIRONMENT"))
        let key = Self.fixtures.appendingPathComponent("test-key-encrypted.p8").path
        let k = try CLI.run(["send", "--campaign", Self.campaign], environment: Self.environment(["PUSHGATE_APNS_KEY_FILE": key]))
        #expect(k.status == 2)
        #expect(k.stderr.contains(key) && k.stderr.contains("keyEncrypted"))
    }

    static func realSend(_ url: String, caFile: String) -> [String: String] {
        environment(["PUSHGATE_APNS_DRY_RUN": "false", "PUSHGATE_APNS_URL": url, "PUSHGATE_APNS_CA_FILE": caFile,
                     "PUSHGATE_APNS_KEY_FILE": fixtures.appendingPathComponent("test-key.p8").path,
                     "PUSHGATE_APNS_KEY_ID": "KEY1234567", "PUSHGATE_APNS_TEAM_ID": "TEAM123456"])
    }

    @Test func aMissingOrNonPEMCAFileIsAConfigurationError() throws {
        let garbage = Self.fixtures.appendingPathComponent("test-key-garbage.p8").path
        for (caFile, code) in [("/nonexistent/ca.pem", "fileNotFound"), (garbage, "caFileNotPEM")] {
            let r = try CLI.run(["send", "--campaign", Self.campaign], environment: Self.realSend("https://127.0.0.1:9", caFile: caFile))
            #expect(r.status == 2)
            // The setting is named where its value came from: here the environment variable.
            #expect(r.stderr.contains("PUSHGATE_APNS_CA_FILE") && r.stderr.contains(code) && r.stderr.contains(caFile), "\(r.stderr)")
            #expect(!r.stdout.contains("devices"), "nothing was attempted")
        }
    }

    @Test func anUnreachableAPNsEndsSendWithExitTwoAndOneMessage() throws {
        let fake = try FakeAPNsServer()
        fake.closePort()
        defer { fake.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try (1...2_000).map { String(repeating: "0", count: 64 - String($0, radix: 16).count) + String($0, radix: 16) }
            .joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let start = Date()
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path], environment: Self.realSend(fake.url, caFile: fake.caFile))
        #expect(r.status == 2)
        #expect(r.stderr.contains("pushgate send: cannot reach APNs at \(fake.url): libcurl error 7"), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "cannot reach APNs").count == 2, "one message, not one per device")
        #expect(r.stdout.contains("not sent       2004"), "\(r.stdout)")
        // A hang guard (it takes well under a second alone), not a speed check.
        #expect(Date().timeIntervalSince(start) < 45)
    }

    @Test func jwtPrintsAFreshES256Token() throws {
        let key = Self.fixtures.appendingPathComponent("test-key.p8").path
        let r = try CLI.run(["jwt"], environment: Self.environment(["PUSHGATE_APNS_KEY_FILE": key,
                                                                     "PUSHGATE_APNS_KEY_ID": "KEY1234567",
                                                                     "PUSHGATE_APNS_TEAM_ID": "TEAM123456"]))
        #expect(r.status == 0)
        let parts = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
        #expect(parts.count == 3)
        var header = String(parts.first ?? "")
        while header.count % 4 != 0 { header += "=" }
        let decoded = Data(base64Encoded: header).map { String(decoding: $0, as: UTF8.self) }
        #expect(decoded == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(!r.stderr.contains("ephemeral"))
        #expect(try CLI.run(["jwt", "extra"]).status == 2)
    }

    @Test func aSandboxSendReportsEachDevicesUniqueIDAndEnvironment() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"environment": "sandbox", "tokens": {"\#(String(repeating: "b", count: 64))": [{"status": 400, "reason": "BadDeviceToken"}]}}"#)
        defer { fake.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try [String(repeating: "a", count: 64), String(repeating: "b", count: 64)].joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        var environment = Self.realSend(fake.url, caFile: fake.caFile)
        environment["PUSHGATE_APNS_ENVIRONMENT"] = "sandbox"
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path, "--json"], environment: environment)
        #expect(r.status == 1, "one device failed: \(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let delivered = try #require(lines.first { $0.contains(String(repeating: "a", count: 64)) })
        let answered = fake.log().first { $0.string("token") == String(repeating: "a", count: 64) }
        let unique = try #require(answered?.string("uniqueId"))
        #expect(delivered.contains(#""apnsUniqueId":"\#(unique)","environment":"sandbox""#), "\(delivered)")
        let failed = try #require(lines.first { $0.contains(String(repeating: "b", count: 64)) })
        #expect(failed.contains(#""result":"failed","status":400,"reason":"BadDeviceToken","environment":"sandbox""#), "\(failed)")
    }

    @Test func sendsToAFakeAPNsAndReportsEveryDevice() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"tokens":{"\#(String(repeating: "0", count: 63))2":[{"status":410,"reason":"Unregistered","timestamp":1700000000000}]}}"#)
        defer { fake.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try (1...300).map { String(repeating: "0", count: 63 - String($0, radix: 16).count) + "0" + String($0, radix: 16) }
            .map { String($0.suffix(64)) }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path, "--json"], environment: Self.environment([
            "PUSHGATE_APNS_DRY_RUN": "false", "PUSHGATE_APNS_URL": fake.url, "PUSHGATE_APNS_CA_FILE": fake.caFile,
            "PUSHGATE_APNS_KEY_FILE": Self.fixtures.appendingPathComponent("test-key.p8").path,
            "PUSHGATE_APNS_KEY_ID": "KEY1234567", "PUSHGATE_APNS_TEAM_ID": "TEAM123456",
        ]))
        #expect(r.status == 1, "one device is unregistered")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 304)
        #expect(lines.filter { $0.contains(#""result":"delivered""#) }.count == 303)
        #expect(lines.contains { $0.contains(#""result":"unregistered","status":410,"reason":"Unregistered","timestamp":1700000000000"#) })
        #expect(r.stderr.contains("unregistered   1"))
        // Every request the fake answered without finding a fault in it.
        let clean = fake.log().filter { $0["violation"] == .null && $0["tokenProblem"] == .null }
        #expect(clean.count == 304)
    }
}

/// A devices file that fails to read is an error (exit 2) naming the file, never a
/// shorter device list: it is read before anything is stored or sent.
@Suite struct DeviceListReadErrorTests {
    @Test func aReadErrorInTheDevicesFileStopsTheSendWithExitTwo() throws {
        // Reading /proc/self/mem at offset 0 fails with EIO after a successful open.
        let r = try CLI.run(["send", "--campaign", SendCommandTests.campaign, "--devices", "/proc/self/mem"],
                            environment: SendCommandTests.environment())
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains(#"--devices "/proc/self/mem": cannot read: Input/output error; nothing was sent"#), "\(r.stderr)")
    }

    @Test func checkLinkStdinFromADirectoryIsAReadErrorNotAnEmptyInput() throws {
        let r = try CLI.run(["check-link", "--stdin"], wrapper: ["/bin/sh", "-c", #"exec "$0" "$@" < /"#])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("pushgate check-link: cannot read standard input after line 0: Is a directory"), "\(r.stderr)")
    }

    @Test func hashKeyFromADirectoryIsAReadError() throws {
        let r = try CLI.run(["hash-key"], wrapper: ["/bin/sh", "-c", #"exec "$0" "$@" < /"#])
        #expect(r.status == 2)
        #expect(r.stderr.contains("pushgate hash-key: cannot read standard input: Is a directory"), "\(r.stderr)")
    }
}

/// `send` runs the outbox: the members that order its campaigns (rate cap, lane, expiry)
/// apply as in `serve`.
@Suite struct SendLaneAndRateTests {
    static func tokens(_ n: Int) -> [String] { (0..<n).map { String(format: "%064x", 0x5e4d << 16 | $0) } }

    static func write(_ json: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("send-rate-\(UUID().uuidString).json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test func laneAndExpiryAreTheOutboxsAsInServe() throws {
        let devices = Self.tokens(2).map { "\"\($0)\"" }.joined(separator: ",")
        let file = try Self.write(#"{"alert":{"body":"x"},"lane":"bulk","expires_at":"2099-01-02T00:00:00Z","devices":[\#(devices)]}"#)
        let r = try CLI.run(["send", "--campaign", file], environment: SendCommandTests.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("built          2"), "\(r.stdout)")
    }

    @Test func ratePerSecondPacesTheSendLikeTheOutbox() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let devices = Self.tokens(30).map { "\"\($0)\"" }.joined(separator: ",")
        let file = try Self.write(#"{"alert":{"body":"x"},"rate_per_second":10,"devices":[\#(devices)]}"#)
        let started = Date().timeIntervalSince1970
        let r = try CLI.run(["send", "--campaign", file], environment: SendCommandTests.environment([
            "PUSHGATE_APNS_DRY_RUN": "false", "PUSHGATE_APNS_URL": fake.url, "PUSHGATE_APNS_CA_FILE": fake.caFile,
            "PUSHGATE_APNS_KEY_FILE": SendCommandTests.fixtures.appendingPathComponent("test-key.p8").path,
            "PUSHGATE_APNS_KEY_ID": "KEY1234567", "PUSHGATE_APNS_TEAM_ID": "TEAM123456",
        ]))
        #expect(r.status == 0, "\(r.stderr)")
        let times = fake.log().compactMap { $0["time"]?.doubleValue }.sorted()
        #expect(times.count == 30)
        // One second's worth (10) at once, then one every 0.1 s: the 30th goes 2 s after the
        // first at the earliest (unpaced, 30 devices take a fraction of that).
        let last = try #require(times.last)
        #expect(last - started >= 2.0, "the last device answered \(last - started) s after the start")
    }
}
