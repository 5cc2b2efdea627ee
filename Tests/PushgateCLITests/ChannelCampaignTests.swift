import Foundation
import StrictJSON
import Testing
import TestSupport

/// Campaigns whose audience is a broadcast channel, through `serve` and its outbox against
/// the fake APNs: one broadcast request per campaign, recorded as the campaign's one
/// entry, Apple's refusals final or retried as Apple says, and a restart in between.
@Suite struct ChannelCampaignTests {
    static let stored = "c2NvcmVzLWxpdmUtbWF0Y2g="
    static let flaky = "Zmxha3ktY2hhbm5lbC0xMg=="
    static let unknown = "bm8tc3VjaC1jaGFubmVs"
    static let unstored = "bm90aGluZy1zdG9yZWQtaGVyZQ=="

    /// The fake knows `stored` and `flaky` (policy 1, the most recent message stored) and
    /// `unstored` (policy 0, no message stored).
    static func script(_ extra: String = "") -> String {
        #"{"environment": "sandbox", "channels": {"com.example.shop": {"\#(stored)": 1, "\#(flaky)": 1, "\#(unstored)": 0}}\#(extra)}"#
    }

    /// `serve` with the fake as both the push host and the channel management host.
    static func config(_ fake: FakeAPNsServer, dispatcher: String = "") throws -> String {
        try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 10, dispatcher: dispatcher,
                               apns: #", "manageURL": "\#(fake.url)""#)
    }

    static func campaign(_ channel: String, _ extra: String = "") -> [UInt8] {
        Array(#"{"channel": "\#(channel)", "live_activity": {"event": "update", "content_state": {"home": 2, "away": 1}}, "priority": 5\#(extra)}"#.utf8)
    }

    static func create(_ server: ServeProcess, _ body: [UInt8]) throws -> String {
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: body))
        #expect(accepted.status == 202, "\(String(decoding: accepted.body, as: UTF8.self))")
        let answer = try #require(try JSONParser().parse(accepted.body).objectValue)
        #expect(answer.int("devices") == 1, "a channel campaign has one recipient: the channel")
        return try #require(answer.string("id"))
    }

    /// The campaign once finished, and its one entry.
    static func finished(_ server: ServeProcess, _ id: String) -> (JSONObject, JSONObject)? {
        var found: (JSONObject, JSONObject)?
        _ = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            guard let detail = server.object("GET", "/v1/campaigns/\(id)"), detail.string("status") == "completed",
                  let entry = detail["results"]?.arrayValue?.first?.objectValue else { return false }
            found = (detail, entry)
            return true
        }
        return found
    }

    static func broadcasts(_ fake: FakeAPNsServer, _ channel: String) -> [JSONObject] {
        fake.log().filter { $0.string("path") == "/4/broadcasts/apps/com.example.shop" && $0.string("channel") == channel }
    }

    @Test func aChannelCampaignIsOneBroadcastWithTheSameProviderTokenAndItsResultIsRecorded() throws {
        let fake = try FakeAPNsServer(scriptJSON: Self.script())
        defer { fake.stop() }
        let server = try ServeProcess(config: try Self.config(fake))
        defer { _ = server.terminate() }

        let id = try Self.create(server, Self.campaign(Self.stored))
        let (detail, entry) = try #require(Self.finished(server, id))
        #expect(detail["counts"]?.objectValue?.int("delivered") == 1, "\(detail)")
        #expect(detail.string("channel") == Self.stored, "the campaign names its channel")
        #expect(entry.string("token") == Self.stored && entry.string("state") == "delivered" && entry.int("status") == 200, "\(entry)")
        // The id recorded is the apns-request-id the broadcast carried (APNs echoes it).
        let requestID = try #require(entry.string("apns_id"))
        #expect(requestID.count == 36 && requestID.hasPrefix(String(id.prefix(24))), "\(requestID)")

        let sent = Self.broadcasts(fake, Self.stored)
        #expect(sent.count == 1 && sent.first?.int("status") == 200 && sent.first?.string("pushType") == "liveactivity", "\(sent)")
        let headers = Set(sent.first?["headers"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        #expect(headers.isSuperset(of: ["apns-channel-id", "apns-push-type", "apns-priority", "apns-request-id", "authorization"]))
        #expect(headers.isDisjoint(with: ["apns-topic", "apns-id"]), "\(headers)")

        // A device campaign of the same app is signed with the same provider token.
        let device = TestTokens.device
        let pushed = try Self.create(server, Array(#"{"alert": "Goal!", "devices": ["\#(device)"]}"#.utf8))
        _ = try #require(Self.finished(server, pushed))
        let signers = Set(fake.log().compactMap { $0.string("tokenSha") })
        #expect(signers.count == 1, "one provider token for broadcasts and pushes")
    }

    @Test func applesRefusalsAreFinalOrRetriedAsAppleSays() throws {
        let fake = try FakeAPNsServer(scriptJSON: Self.script(#", "tokens": {"\#(Self.flaky)": [{"status": 500, "reason": "InternalServerError"}, {"status": 429, "reason": "TooManyRequests"}, {"status": 200}]}"#))
        defer { fake.stop() }
        let server = try ServeProcess(config: try Self.config(fake, dispatcher: #", "retryBaseSeconds": 0.05, "retryMaxSeconds": 0.1"#))
        defer { _ = server.terminate() }

        // No such channel, and APNs unreachable when it is accepted (so the channel cannot be
        // read first): sent once APNs is back, 400 ChannelNotRegistered, final at the first answer.
        fake.closePort()
        let gone = try Self.create(server, Self.campaign(Self.unknown))
        fake.openPort()
        let (_, goneEntry) = try #require(Self.finished(server, gone))
        #expect(goneEntry.string("state") == "failed" && goneEntry.string("reason") == "ChannelNotRegistered" && goneEntry.int("status") == 400, "\(goneEntry)")
        #expect(Self.broadcasts(fake, Self.unknown).count == 1, "a final answer is not asked again")

        // 500, then 429: sent again until APNs accepts it, and recorded once.
        let flaky = try Self.create(server, Self.campaign(Self.flaky))
        let (_, flakyEntry) = try #require(Self.finished(server, flaky))
        #expect(flakyEntry.string("state") == "delivered", "\(flakyEntry)")
        let tries = Self.broadcasts(fake, Self.flaky)
        #expect(tries.map { $0.int("status") ?? 0 } == [500, 429, 200], "\(tries)")
    }

    @Test func aChannelCampaignInTheOutboxSurvivesARestartAndIsSentOnce() throws {
        let fake = try FakeAPNsServer(scriptJSON: Self.script())
        defer { fake.stop() }
        let config = try Self.config(fake)
        fake.closePort()  // APNs unreachable: the campaign waits in the outbox
        let first = try ServeProcess(config: config)
        let id = try Self.create(first, Self.campaign(Self.stored))
        // It was tried and found APNs unreachable (waiting, no attempt spent), not sent.
        let waiting = eventuallyBlocking(timeout: .seconds(60), interval: .milliseconds(20)) {
            first.object("GET", "/v1/campaigns/\(id)")?["results"]?.arrayValue?.first?.objectValue?.string("reason") == "unreachable"
        }
        #expect(waiting)
        first.kill9()
        #expect(Self.broadcasts(fake, Self.stored).isEmpty)

        fake.openPort()
        let second = try ServeProcess(config: config)
        defer { _ = second.terminate() }
        let (detail, entry) = try #require(Self.finished(second, id))
        #expect(entry.string("state") == "delivered" && detail["counts"]?.objectValue?.int("delivered") == 1, "\(detail)")
        #expect(Self.broadcasts(fake, Self.stored).count == 1, "sent exactly once")
    }

    @Test func theLocalRulesAnswer422WithTheirCodesAndNothingIsSent() throws {
        let fake = try FakeAPNsServer(scriptJSON: Self.script())
        defer { fake.stop() }
        let server = try ServeProcess(config: try Self.config(fake))
        defer { _ = server.terminate() }
        let device = TestTokens.device
        let cases: [([UInt8], String, String)] = [
            (Self.campaign("not base64"), "invalidChannelId", "/channel"),
            (Self.campaign(Self.stored, #", "devices": ["\#(device)"]"#), "conflictingFields", "/devices"),
            (Self.campaign(Self.stored, #", "collapse_id": "score""#), "channelForbidsMember", "/collapse_id"),
            (Array(#"{"channel": "\#(Self.stored)", "push_type": "alert", "alert": "Goal!"}"#.utf8), "channelRequiresLiveActivity", "/push_type"),
        ]
        for (body, code, pointer) in cases {
            let answer = try #require(server.request("POST", "/v1/campaigns", json: body))
            let error = try JSONParser().parse(answer.body).objectValue?["errors"]?.arrayValue?.first?.objectValue
            #expect(answer.status == 422 && error?.string("code") == code && error?.string("pointer") == pointer,
                    "\(String(decoding: answer.body, as: UTF8.self))")
        }
        // The channel is read at Apple first: one that does not exist, or stores no message
        // while the campaign's expiration is not 0, is refused before it is stored.
        let found: [([UInt8], String, String)] = [
            (Self.campaign(Self.unknown), "ChannelNotRegistered", "/channel"),
            (Self.campaign(Self.unstored), "channelStoresNoMessage", "/channel"),
            (Self.campaign(Self.unstored, #", "expiration": 1900000000"#), "channelStoresNoMessage", "/expiration"),
        ]
        for (body, code, pointer) in found {
            let answer = try #require(server.request("POST", "/v1/campaigns", json: body))
            let error = try JSONParser().parse(answer.body).objectValue?["errors"]?.arrayValue?.first?.objectValue
            #expect(answer.status == 422 && error?.string("code") == code && error?.string("pointer") == pointer,
                    "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let reads = fake.log().filter { $0.string("method") == "GET" && $0.string("path") == "/1/apps/com.example.shop/channels" }
        #expect(reads.count == 3 && Self.broadcasts(fake, Self.unstored).isEmpty, "read, never sent")
        let expiring = try Self.create(server, Self.campaign(Self.unstored, #", "expiration": 0"#))
        let (_, expiringEntry) = try #require(Self.finished(server, expiring))
        #expect(expiringEntry.string("state") == "delivered", "\(expiringEntry)")

        let lines = Array((String(decoding: Self.campaign(Self.stored), as: UTF8.self) + "\n" + device + "\n").utf8)
        let ndjson = try #require(server.request("POST", "/v1/campaigns", headers: [("Content-Type", "application/x-ndjson")], body: lines))
        #expect(ndjson.status == 422 && String(decoding: ndjson.body, as: UTF8.self).contains("conflictingFields"))

        // Preview and dry run show the exact broadcast request.
        let previewed = try #require(server.request("POST", "/v1/notifications/preview", json: Self.campaign(Self.stored)))
        let preview = try #require(try JSONParser().parse(previewed.body).objectValue)
        let request = preview["requests"]?.arrayValue?.first?.objectValue
        #expect(preview.string("channel") == Self.stored && request?.string("path") == "/4/broadcasts/apps/com.example.shop", "\(preview)")
        #expect(request?["headers"]?.objectValue?.string("apns-channel-id") == Self.stored)
        let dry = try Self.create(server, Self.campaign(Self.stored, #", "dry_run": true"#))
        let (_, dryEntry) = try #require(Self.finished(server, dry))
        #expect(dryEntry.string("state") == "dry-run" && dryEntry.string("apns_id") != nil, "\(dryEntry)")
        #expect(fake.log().filter { $0.string("path")?.hasPrefix("/4/") == true }.count == 1, "only the campaign with expiration 0 was broadcast")
    }

    @Test func sendSendsAChannelCampaignAsOneBroadcast() throws {
        let fake = try FakeAPNsServer(scriptJSON: Self.script())
        defer { fake.stop() }
        let file = fake.directory.appendingPathComponent("channel.json")
        try Data(Self.campaign(Self.stored)).write(to: file)
        var environment = SendCommandTests.realSend(fake.url, caFile: fake.caFile)
        environment["PUSHGATE_APNS_MANAGE_URL"] = fake.url
        let r = try CLI.run(["send", "--campaign", file.path, "--json"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""token":"\#(Self.stored)""#) && r.stdout.contains(#""result":"delivered""#), "\(r.stdout)")
        #expect(Self.broadcasts(fake, Self.stored).map { $0.int("status") ?? 0 } == [200])

        let list = fake.directory.appendingPathComponent("devices.txt")
        try TestTokens.device.write(to: list, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["send", "--campaign", file.path, "--devices", list.path], environment: environment)
        #expect(refused.status == 2 && refused.stderr.contains("conflictingFields"), "\(refused.stderr)")
        #expect(Self.broadcasts(fake, Self.stored).count == 1, "nothing more was sent")

        // The channel is read first: an unknown one, or a non-zero expiration to one that
        // stores no message, is a finding (exit 1) and nothing is broadcast.
        for (body, code) in [(Self.campaign(Self.unknown), "ChannelNotRegistered"), (Self.campaign(Self.unstored), "channelStoresNoMessage")] {
            try Data(body).write(to: file)
            let r = try CLI.run(["send", "--campaign", file.path], environment: environment)
            #expect(r.status == 1 && r.stderr.contains(code) && r.stderr.contains("channel"), "\(r.stderr)")
        }
        #expect(Self.broadcasts(fake, Self.unknown).isEmpty && Self.broadcasts(fake, Self.unstored).isEmpty)
    }
}
