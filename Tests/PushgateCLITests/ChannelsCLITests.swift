import Foundation
import StrictJSON
import Testing
import TestSupport

/// `pushgate channels create|list|show|delete` against the fake's management API, with the
/// shipped configuration pointed at it (`apns.manageURL`).
@Suite struct ChannelsCLITests {
    static func environment(_ fake: FakeAPNsServer) -> [String: String] {
        var env = KeyStopCLITests.environment(fake)
        env["PUSHGATE_APNS_MANAGE_URL"] = fake.url
        return env
    }

    static func object(_ text: String) -> JSONObject? { try? JSONParser().parse(Array(text.utf8)).objectValue }

    @Test func createShowListDeleteWithJSON() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let env = Self.environment(fake)
        let created = try CLI.run(["channels", "create", "--storage-policy", "most-recent-message-stored", "--json"], environment: env)
        #expect(created.status == 0, "\(created.stderr)")
        let answer = try #require(Self.object(created.stdout))
        let id = try #require(answer.string("channel_id"))
        #expect(answer.string("app") == "default" && answer.string("environment") == "sandbox")
        #expect(answer.int("message_storage_policy") == 1 && answer.string("push_type") == "LiveActivity" && answer.string("request_id") != nil)

        let shown = try CLI.run(["channels", "show", id, "--json"], environment: env)
        #expect(shown.status == 0 && Self.object(shown.stdout)?.int("message_storage_policy") == 1, "\(shown.stderr)")
        let listed = try CLI.run(["channels", "list", "--json"], environment: env)
        #expect(Self.object(listed.stdout)?["channels"] == .array([.string(id)]), "\(listed.stdout)")
        let text = try CLI.run(["channels", "list"], environment: env)
        #expect(text.status == 0 && text.stdout == id + "\n")

        let deleted = try CLI.run(["channels", "delete", id, "--json"], environment: env)
        #expect(deleted.status == 0 && Self.object(deleted.stdout)?["deleted"] == .bool(true), "\(deleted.stderr)")
        let gone = try CLI.run(["channels", "show", id], environment: env)
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("APNs answered 400 ChannelNotRegistered") && gone.stderr.contains("[ChannelNotRegistered]")
                && gone.stderr.contains("apns-request-id"), "\(gone.stderr)")
        // Every request went to the management paths of the app's bundle id.
        #expect(fake.log().allSatisfy { $0.string("path")?.hasPrefix("/1/apps/com.example.shop/") == true })
    }

    @Test func mistakesAreCaughtBeforeAnythingIsSent() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let env = Self.environment(fake)
        let cases: [([String], String)] = [
            (["channels", "create"], "--storage-policy: give Apple's message-storage-policy"),
            (["channels", "create", "--storage-policy", "2"], "--storage-policy: expected 0 (no-message-stored) or 1"),
            (["channels", "show", "not a channel!"], "[invalidChannelId]"),
            (["channels", "delete"], "expected one channel ID"),
            (["channels", "list", "--environment", "production"], "sends in \"sandbox\" (apns.environments)"),
            (["channels", "list", "--app", "nope"], "[unknownApp]"),
        ]
        for (arguments, expected) in cases {
            let r = try CLI.run(arguments, environment: env)
            #expect(r.status == 2, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(expected), "\(arguments): \(r.stderr)")
        }
        // The shipped configuration is a dry run: channels need real credentials.
        let dry = try CLI.run(["channels", "list"], environment: SendCommandTests.environment())
        #expect(dry.status == 2 && dry.stderr.contains("apns.dryRun is true"), "\(dry.stderr)")
        #expect(fake.log().isEmpty)
    }

    @Test func applesRefusalExitsOne() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"channelLimit": 0}"#)
        defer { fake.stop() }
        let r = try CLI.run(["channels", "create", "--storage-policy", "0"], environment: Self.environment(fake))
        #expect(r.status == 1)
        #expect(r.stderr.contains("CannotCreateChannelConfig") && r.stderr.contains("10,000"), "\(r.stderr)")
    }
}
