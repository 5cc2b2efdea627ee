import Foundation
import StrictJSON
import Testing
import TestSupport

/// The Live Activity registry's bounds through `serve` (small limits configured so it runs
/// fast): tokens per activity and per app, the send guard on update and end as on
/// `POST /v1/campaigns`, and the retention of update tokens.
@Suite struct LiveActivityLimitsTests {
    static func token(_ prefix: String) -> String { prefix + String(repeating: "0", count: 64 - prefix.count) }

    /// A dry-run gateway whose registry keeps 3 update tokens per activity and 6 tokens per
    /// app, and whose guard asks campaigns to more than 2 devices to confirm their count.
    static func config(_ name: String, in folder: URL, storage: String = "") throws -> String {
        let path = folder.appendingPathComponent("\(name).json").path
        let root = TestPaths.packageRoot.path
        try """
        {"topic": "com.example.shop", "routes": "\(root)/config/routes.json", "templates": "\(root)/Templates",
         "apns": {"dryRun": true, "environment": "sandbox"},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off"},
         "guard": {"confirmAbove": 2},
         "storage": {"path": "\(folder.path)/\(name).db", "liveActivityTokensPerActivity": 3, "liveActivityTokensPerApp": 6\(storage)}}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-la-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func post(_ server: ServeProcess, _ path: String, _ body: String) throws -> (status: Int, object: JSONObject) {
        let response = try #require(server.request("POST", path, json: Array(body.utf8)))
        return (response.status, try JSONParser().parse(response.body).objectValue ?? JSONObject())
    }

    func register(_ server: ServeProcess, _ body: String) throws -> (status: Int, object: JSONObject) {
        try post(server, "/v1/live-activities/tokens", body)
    }

    func firstError(_ object: JSONObject) -> JSONObject? { object["errors"]?.arrayValue?.first?.objectValue }

    @Test func tokensPastTheActivityAndAppLimitsAreRefusedAndRenewalsAndReplacementsAreNot() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ServeProcess(config: try Self.config("limits", in: folder))
        defer { _ = server.terminate() }

        let first = ["a1", "a2", "a3"].map(Self.token)
        for token in first {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(token)"}"#).status == 201)
        }
        // A fourth token for the activity: refused, naming the limit and the setting.
        let over = try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(Self.token("a4"))"}"#)
        #expect(over.status == 422 && over.object.string("code") == "registryFull", "\(over.object)")
        #expect(firstError(over.object)?.string("code") == "activityTokenLimit" && firstError(over.object)?.string("pointer") == "/activity_id")
        #expect(over.object.string("detail")?.contains("has 3 update tokens") == true
                && over.object.string("detail")?.contains("storage.liveActivityTokensPerActivity") == true, "\(over.object)")
        // A token reported again only renews its time; a replacement takes the outdated one's place.
        #expect(try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(first[0])"}"#).status == 201)
        let replaced = try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(Self.token("a5"))", "replaces": "\#(first[2])"}"#)
        #expect(replaced.status == 201 && replaced.object["replaced"] == .bool(true), "\(replaced.object)")

        // Another activity fills the app's six places; then a new token of any kind is refused.
        for token in ["b1", "b2", "b3"].map(Self.token) {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-2", "token": "\#(token)"}"#).status == 201)
        }
        let full = try register(server, #"{"kind": "push-to-start", "token": "\#(Self.token("c1"))"}"#)
        #expect(full.status == 422 && full.object.string("code") == "registryFull", "\(full.object)")
        #expect(firstError(full.object)?.string("code") == "appTokenLimit" && firstError(full.object)?.string("pointer") == "/token")
        let elsewhere = try register(server, #"{"kind": "update", "activity_id": "match-3", "token": "\#(Self.token("d1"))"}"#)
        #expect(elsewhere.status == 422 && firstError(elsewhere.object)?.string("code") == "appTokenLimit", "\(elsewhere.object)")
        #expect(try register(server, #"{"kind": "update", "activity_id": "match-2", "token": "\#(Self.token("b1"))"}"#).status == 201,
                "a renewal is taken when the app is full")
    }

    @Test func updateAndEndTakeTheSendGuardAsCampaignsDo() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ServeProcess(config: try Self.config("guard", in: folder))
        defer { _ = server.terminate() }
        for token in ["a1", "a2", "a3"].map(Self.token) {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(token)"}"#).status == 201)
        }
        let content = #""live_activity": {"content_state": {"home": 1}}"#
        for event in ["update", "end"] {
            let path = "/v1/live-activities/match-1/\(event)"
            // Three devices, over guard.confirmAbove (2): the count must be confirmed.
            let unconfirmed = try post(server, path, "{\(content)}")
            #expect(unconfirmed.status == 422 && unconfirmed.object.string("code") == "confirmationRequired", "\(event): \(unconfirmed.object)")
            #expect(firstError(unconfirmed.object)?.string("pointer") == "/confirm_devices")
            let wrong = try post(server, path, #"{\#(content), "confirm_devices": 2}"#)
            #expect(wrong.status == 422 && wrong.object.string("code") == "confirmationRequired", "\(event): \(wrong.object)")
            let confirmed = try post(server, path, #"{\#(content), "confirm_devices": 3}"#)
            #expect(confirmed.status == 202 && confirmed.object["devices"] == .number("3"), "\(event): \(confirmed.object)")
        }
        // The same count through POST /v1/campaigns is refused the same way.
        let devices = ["a1", "a2", "a3"].map { "\"\(Self.token($0))\"" }.joined(separator: ", ")
        let campaign = try post(server, "/v1/campaigns", #"{"live_activity": {"event": "update", "content_state": {"home": 1}}, "devices": [\#(devices)]}"#)
        #expect(campaign.status == 422 && campaign.object.string("code") == "confirmationRequired", "\(campaign.object)")
    }

    @Test func updateTokensAreRemovedAfterTheirRetentionAndPushToStartTokensStay() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 0.001 hours: 3.6 seconds. Retention runs as the server starts, then every 5 minutes.
        let config = try Self.config("retention", in: folder, storage: #", "liveActivityTokenRetentionHours": 0.001"#)
        var server = try ServeProcess(config: config)
        for token in ["a1", "a2"].map(Self.token) {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(token)"}"#).status == 201)
        }
        #expect(try register(server, #"{"kind": "push-to-start", "token": "\#(Self.token("c1"))"}"#).status == 201)
        let content = #"{"live_activity": {"content_state": {"home": 1}}}"#
        #expect(try post(server, "/v1/live-activities/match-1/update", content).status == 202)
        _ = server.terminate()
        Thread.sleep(forTimeInterval: 4)

        server = try ServeProcess(config: config)
        defer { _ = server.terminate() }
        var last: (status: Int, object: JSONObject)?
        let gone = eventuallyBlocking(timeout: .seconds(10), interval: .milliseconds(50)) {
            last = try? post(server, "/v1/live-activities/match-1/update", content)
            return last?.status == 404
        }
        #expect(gone && last.flatMap { firstError($0.object) }?.string("code") == "unknownActivity", "\(String(describing: last))")
        // The activity's places are free again: three new tokens fit; and the push-to-start
        // token was kept (it still counts toward the app's six).
        for token in ["b1", "b2", "b3"].map(Self.token) {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-1", "token": "\#(token)"}"#).status == 201)
        }
        for token in ["d1", "d2"].map(Self.token) {
            #expect(try register(server, #"{"kind": "update", "activity_id": "match-2", "token": "\#(token)"}"#).status == 201)
        }
        let full = try register(server, #"{"kind": "update", "activity_id": "match-2", "token": "\#(Self.token("d3"))"}"#)
        #expect(full.status == 422 && firstError(full.object)?.string("code") == "appTokenLimit", "the push-to-start token was kept: \(full.object)")
    }
}
