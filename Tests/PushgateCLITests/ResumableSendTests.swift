import Foundation
import Testing
import TestSupport

/// `send` runs the outbox: stopped by `kill -9`, Ctrl-C or SIGTERM, the same command with
/// `--store` finishes it, sending nothing twice apart from the in-flight window after a
/// `kill -9`; a store of another send is refused; and one retry policy owns the attempts.
@Suite(.serialized) struct ResumableSendTests {
    /// A send running in the background, its output in files (no pipe to fill).
    final class Running {
        let process = Process()
        let stdout: URL
        let stderr: URL

        init(_ arguments: [String], environment: [String: String]) throws {
            let dir = FileManager.default.temporaryDirectory
            stdout = dir.appendingPathComponent("send-out-\(UUID().uuidString)")
            stderr = dir.appendingPathComponent("send-err-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
            _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
            process.executableURL = CLI.executable
            process.arguments = arguments
            process.currentDirectoryURL = TestPaths.packageRoot
            process.environment = environment
            process.standardOutput = try FileHandle(forWritingTo: stdout)
            process.standardError = try FileHandle(forWritingTo: stderr)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        func finish() -> CLIResult {
            process.waitUntilExit()
            return CLIResult(status: process.terminationStatus, stdout: (try? String(contentsOf: stdout, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
        }
    }

    static func tokens(_ n: Int) -> [String] { (0..<n).map { String(format: "%064x", 0x7e50000 | $0) } }

    /// A campaign paced at `rate` per second (so a test can stop it half-way), and its devices file.
    static func campaign(devices: Int, rate: Int) throws -> (campaign: String, devices: String, tokens: [String]) {
        let dir = FileManager.default.temporaryDirectory
        let campaign = dir.appendingPathComponent("resume-\(UUID().uuidString).json")
        try #"{"alert":{"body":"resume"},"rate_per_second":\#(rate)}"#.write(to: campaign, atomically: true, encoding: .utf8)
        let list = dir.appendingPathComponent("resume-\(UUID().uuidString).txt")
        let tokens = Self.tokens(devices)
        try tokens.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        return (campaign.path, list.path, tokens)
    }

    static func store() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("send-store-\(UUID().uuidString)").path
    }

    /// How many requests the fake answered per token.
    static func answers(_ fake: FakeAPNsServer) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in fake.log() { if let token = line.string("token") { counts[token, default: 0] += 1 } }
        return counts
    }

    static func waitForAnswers(_ fake: FakeAPNsServer, atLeast n: Int) {
        let deadline = Date().addingTimeInterval(60)
        while fake.log().count < n && Date() < deadline { usleep(20_000) }
    }

    @Test func killedWithSIGKILLAndResumedEveryDeviceIsAnsweredOnceApartFromTheWindow() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let (campaign, devices, tokens) = try Self.campaign(devices: 300, rate: 100)
        let store = Self.store()
        let arguments = ["send", "--campaign", campaign, "--devices", devices, "--store", store]
        let environment = SendCommandTests.realSend(fake.url, caFile: fake.caFile)
        let first = try Running(arguments, environment: environment)
        Self.waitForAnswers(fake, atLeast: 120)
        kill(first.process.processIdentifier, SIGKILL)
        _ = first.finish()
        let before = Self.answers(fake).count
        #expect(before >= 120 && before < 300, "killed half-way: \(before) of 300 answered")

        let second = try CLI.run(arguments, environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("resuming the send kept in"), "\(second.stderr)")
        #expect(second.stdout.contains("devices        300") && second.stdout.contains("delivered      300"), "\(second.stdout)")
        let answers = Self.answers(fake)
        #expect(Set(answers.keys) == Set(tokens), "every device answered")
        // Sent twice: at most what was claimed and not recorded when the process died
        // (rate_per_second keeps the window to about a second's worth).
        let twice = answers.values.filter { $0 > 1 }.count
        #expect(twice <= 100, "\(twice) devices sent twice")
        #expect(!FileManager.default.fileExists(atPath: store) || FileManager.default.fileExists(atPath: store + "/outbox.sqlite"),
                "--store is kept")
    }

    @Test func interruptedWithCtrlCSaysHowToFinishAndTheSameCommandFinishesWithNothingTwice() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let (campaign, devices, tokens) = try Self.campaign(devices: 300, rate: 100)
        let arguments = ["send", "--campaign", campaign, "--devices", devices]
        let environment = SendCommandTests.realSend(fake.url, caFile: fake.caFile)
        let first = try Running(arguments, environment: environment)
        Self.waitForAnswers(fake, atLeast: 100)
        kill(first.process.processIdentifier, SIGINT)
        let stopped = first.finish()
        #expect(stopped.status == 130, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("pushgate send: interrupted ("), "\(stopped.stderr)")
        // A temporary store is kept, and the message gives the command that finishes it.
        let hint = try #require(stopped.stderr.split(separator: "\n").first { $0.contains("to send it, run: pushgate send") })
        let folder = try #require(hint.range(of: "--store ").map { String(hint[$0.upperBound...]) })
        #expect(FileManager.default.fileExists(atPath: folder + "/outbox.sqlite"), "\(folder)")

        let second = try CLI.run(arguments + ["--store", folder], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("delivered      300"), "\(second.stdout)")
        let answers = Self.answers(fake)
        #expect(Set(answers.keys) == Set(tokens))
        #expect(answers.values.allSatisfy { $0 == 1 }, "a stop lets the answers in flight be recorded: nothing is sent twice")
    }

    @Test func aStoreOfAnotherSendIsRefused() throws {
        let store = Self.store()
        let (campaign, devices, _) = try Self.campaign(devices: 3, rate: 1000)
        let done = try CLI.run(["send", "--campaign", campaign, "--devices", devices, "--store", store], environment: SendCommandTests.environment())
        #expect(done.status == 0, "\(done.stderr)")
        // Run again, the same send: answered from the store, nothing sent again.
        let again = try CLI.run(["send", "--campaign", campaign, "--devices", devices, "--store", store], environment: SendCommandTests.environment())
        #expect(again.status == 0 && again.stdout.contains("built          3"), "\(again.stdout)\(again.stderr)")
        // Another campaign, and the same campaign for another app's environment: refused, exit 2.
        let other = try Self.campaign(devices: 3, rate: 999)
        let refused = try CLI.run(["send", "--campaign", other.campaign, "--devices", devices, "--store", store], environment: SendCommandTests.environment())
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("holds another send"), "\(refused.stderr)")
        let elsewhere = try CLI.run(["send", "--campaign", campaign, "--devices", devices, "--store", store],
                                    environment: SendCommandTests.environment(["PUSHGATE_APNS_ENVIRONMENT": "production"]))
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("holds another send"), "\(elsewhere.stderr)")
        // A file where the folder should be.
        let file = try Self.campaign(devices: 1, rate: 1).campaign
        let notAFolder = try CLI.run(["send", "--campaign", campaign, "--devices", devices, "--store", file], environment: SendCommandTests.environment())
        #expect(notAFolder.status == 2 && notAFolder.stderr.contains("not a folder"), "\(notAFolder.stderr)")
    }

    /// One owner of retries: a device APNs answers 503 every time costs exactly
    /// `dispatcher.maxAttempts` requests, however `apns.retry` is set.
    @Test func aDeviceAnswered503ForeverCostsMaxAttemptsRequests() throws {
        let bad = String(repeating: "5", count: 64)
        let fake = try FakeAPNsServer(scriptJSON: #"{"tokens":{"\#(bad)":[{"status":503,"reason":"ServiceUnavailable"}]}}"#)
        defer { fake.stop() }
        let (campaign, devices, _) = try Self.campaign(devices: 2, rate: 1000)
        let list = try String(contentsOfFile: devices, encoding: .utf8) + "\n" + bad
        try list.write(toFile: devices, atomically: true, encoding: .utf8)
        var environment = SendCommandTests.realSend(fake.url, caFile: fake.caFile)
        environment["PUSHGATE_DISPATCHER_MAX_ATTEMPTS"] = "3"
        environment["PUSHGATE_DISPATCHER_RETRY_BASE_SECONDS"] = "0.05"
        environment["PUSHGATE_APNS_RETRY_MAX_ATTEMPTS"] = "4"
        let r = try CLI.run(["send", "--campaign", campaign, "--devices", devices, "--json"], environment: environment)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(Self.answers(fake)[bad] == 3, "\(Self.answers(fake)[bad] ?? 0) requests")
        #expect(r.stdout.contains(#""token":"\#(bad)","result":"failed","status":503,"reason":"ServiceUnavailable""#), "\(r.stdout)")
    }
}
