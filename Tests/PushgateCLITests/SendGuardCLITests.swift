import Foundation
import Testing
import TestSupport

/// `pushgate send` has the same risk as a campaign posted to `serve`: more devices than
/// `guard.confirmAbove` need the exact count, checked before anything is sent.
@Suite struct SendGuardCLITests {
    static let campaign = SendCommandTests.campaign

    static func devicesFile(_ count: Int) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("guard-\(UUID().uuidString).txt")
        try (1...count).map { String(repeating: "e", count: 64 - String($0, radix: 16).count) + String($0, radix: 16) }
            .joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    static func environment(confirmAbove: Int) -> [String: String] {
        SendCommandTests.environment(["PUSHGATE_GUARD_CONFIRM_ABOVE": String(confirmAbove)])
    }

    @Test func overTheLimitNothingIsSentWithoutTheExactCount() throws {
        let file = try Self.devicesFile(3)
        // The campaign's own 4 devices plus the file's 3.
        let refused = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path], environment: Self.environment(confirmAbove: 5))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("7 devices, more than guard.confirmAbove (5)") && refused.stderr.contains("[confirmationRequired]"),
                "\(refused.stderr)")
        #expect(!refused.stdout.contains("built"), "nothing was built or sent")

        let wrong = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path, "--confirm-devices", "6"],
                                environment: Self.environment(confirmAbove: 5))
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("--confirm-devices: confirm_devices is 6 but the campaign has 7 devices"), "\(wrong.stderr)")

        let right = try CLI.run(["send", "--campaign", Self.campaign, "--devices", file.path, "--confirm-devices", "7"],
                                environment: Self.environment(confirmAbove: 5))
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stdout.contains("built          7"))
    }

    @Test func theCampaignFileCanCarryTheConfirmation() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("guard-campaign-\(UUID().uuidString).json")
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent(Self.campaign), encoding: .utf8)
        try text.replacingOccurrences(of: "\"badge\": 1,", with: "\"badge\": 1, \"confirm_devices\": 4,")
            .write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["send", "--campaign", file.path], environment: Self.environment(confirmAbove: 2))
        #expect(r.status == 0, "\(r.stderr)")
        let refused = try CLI.run(["send", "--campaign", Self.campaign], environment: Self.environment(confirmAbove: 2))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("confirm_devices: the campaign has 4 devices, more than guard.confirmAbove (2)"), "\(refused.stderr)")
    }

    @Test func aPipeThatCannotBeCountedStopsAtTheLimit() throws {
        #expect(try CLI.run(["send", "--campaign", Self.campaign, "--confirm-devices", "x"]).status == 2)
        let tokens = (1...3).map { String(repeating: "d", count: 63) + String($0) }.joined(separator: "\n") + "\n"
        let r = try CLI.run(["send", "--campaign", Self.campaign, "--devices", "/dev/stdin"], stdin: Data(tokens.utf8),
                            environment: Self.environment(confirmAbove: 5))
        #expect(r.status == 2)
        #expect(r.stderr.contains("more than 5 devices") && r.stderr.contains("[confirmationRequired]"), "\(r.stderr)")
        #expect(r.stdout.contains("built          5"), "\(r.stdout)")
    }

    @Test func theLimitIsASettingWithItsVariable() throws {
        let bad = try CLI.run(["config", "check"], environment: SendCommandTests.environment(["PUSHGATE_GUARD_CONFIRM_ABOVE": "many"]))
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("environment variable PUSHGATE_GUARD_CONFIRM_ABOVE") && bad.stderr.contains("[invalidValue]"), "\(bad.stderr)")
        let printed = try CLI.run(["config", "print"], environment: SendCommandTests.environment())
        #expect(printed.stdout.contains("\"confirmAbove\": 10000"), "\(printed.stdout)")
    }
}

extension SendGuardCLITests {
    @Test func schedulingIsRefusedBySendWhichSendsAtOnce() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("guard-sched-\(UUID().uuidString).json")
        try #"{"alert":{"body":"x"},"send_at":"2099-01-01T00:00:00Z","expires_at":"2099-01-02T00:00:00Z","devices":["\#(TestTokens.device)"]}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["send", "--campaign", file.path], environment: SendCommandTests.environment())
        #expect(r.status == 1)
        #expect(r.stderr.contains("#/send_at: pushgate send sends at once") && !r.stderr.contains("#/expires_at:"), "\(r.stderr)")
        #expect(!r.stdout.contains("built"))
    }
}
