import Foundation
import StrictJSON
import Testing
import TestSupport

/// The Live Activity token registry through `serve` and the fake APNs: the app reports
/// tokens, `update` and `end` reach every live token of the activity through the outbox,
/// and a token APNs answers 410 or 400 BadDeviceToken for is not sent to again until the
/// app reports it again.
@Suite struct LiveActivityRegistryCLITests {
    static func token(_ prefix: String) -> String { prefix + String(repeating: "0", count: 64 - prefix.count) }

    static let live = token("a1"), gone = token("a2"), bad = token("a3"), elsewhere = token("b1"), starter = token("c1")

    func register(_ server: ServeProcess, _ body: String) throws -> (status: Int, object: JSONObject) {
        let response = try #require(server.request("POST", "/v1/live-activities/tokens", json: Array(body.utf8)))
        return (response.status, try JSONParser().parse(response.body).objectValue ?? JSONObject())
    }

    func send(_ server: ServeProcess, _ activity: String, _ event: String, _ body: String) throws -> (status: Int, object: JSONObject) {
        let response = try #require(server.request("POST", "/v1/live-activities/\(activity)/\(event)", json: Array(body.utf8)))
        return (response.status, try JSONParser().parse(response.body).objectValue ?? JSONObject())
    }

    func finished(_ server: ServeProcess, _ id: String) throws -> JSONObject {
        var last: JSONObject?
        let done = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            last = server.object("GET", "/v1/campaigns/\(id)")
            return last?["status"]?.stringValue == "completed"
        }
        #expect(done, "campaign \(id) did not complete: \(String(describing: last))")
        return try #require(last)
    }

    @Test func updateAndEndReachEveryLiveTokenAndDeadOnesAreNotSentAgain() throws {
        // Apple's 410 timestamp is after the registration, so the token is dead (as for
        // devices); a BadDeviceToken is dead as of its answer.
        let deadAt: Int64 = 4_102_444_800_000
        let fake = try FakeAPNsServer(scriptJSON: """
            {"tokens": {"\(Self.gone)": [{"status": 410, "reason": "Unregistered", "timestamp": \(deadAt)}],
                        "\(Self.bad)": [{"status": 400, "reason": "BadDeviceToken"}]}}
            """)
        defer { fake.stop() }
        let server = try ServeProcess(config: try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 8))
        defer { _ = server.terminate() }

        // Report: three update tokens of one activity, one of another, a push-to-start token.
        for token in [Self.live, Self.gone, Self.bad] {
            let r = try register(server, #"{"kind": "update", "activity_id": "delivery-1042", "token": "\#(token)"}"#)
            #expect(r.status == 201, "\(r.object)")
            #expect(r.object["kind"] == .string("update") && r.object["activity_id"] == .string("delivery-1042"))
            #expect(r.object["was_dead"] == .bool(false) && r.object["app"] == .string("default"))
        }
        #expect(try register(server, #"{"kind": "update", "activity_id": "delivery-2000", "token": "\#(Self.elsewhere)"}"#).status == 201)
        let start = try register(server, #"{"kind": "push-to-start", "token": "\#(Self.starter.uppercased())"}"#)
        #expect(start.status == 201 && start.object["activity_id"] == .null && start.object["token"] == .string(Self.starter))

        // Update by activity: a liveactivity campaign to its three tokens, through the outbox.
        let update = try send(server, "delivery-1042", "update", #"{"live_activity": {"content_state": {"status": "on the way", "etaMinutes": 8}}}"#)
        #expect(update.status == 202, "\(update.object)")
        #expect(update.object["devices"] == .number("3"))
        let first = try finished(server, try #require(update.object["id"]?.stringValue))
        let rows = (first["results"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(rows.map { $0["token"]?.stringValue ?? "" } == [Self.live, Self.gone, Self.bad])
        #expect(rows.map { $0["state"]?.stringValue ?? "" } == ["delivered", "unregistered", "failed"])
        #expect(rows.last?["reason"] == .string("BadDeviceToken"))
        let sent = fake.log()
        #expect(sent.count == 3 && sent.allSatisfy { $0.string("pushType") == "liveactivity" && $0.string("topic") == "com.example.shop.push-type.liveactivity" },
                "\(sent)")

        // Both dead tokens are left out from now on; the other activity's token was never sent to.
        let again = try send(server, "delivery-1042", "update", #"{"live_activity": {"event": "update", "content_state": {"status": "here"}}}"#)
        #expect(again.status == 202 && again.object["devices"] == .number("1"), "\(again.object)")
        _ = try finished(server, try #require(again.object["id"]?.stringValue))
        let end = try send(server, "delivery-1042", "end", #"{"live_activity": {"content_state": {"status": "delivered"}, "dismissal_date": 0}}"#)
        #expect(end.status == 202 && end.object["devices"] == .number("1"), "\(end.object)")
        _ = try finished(server, try #require(end.object["id"]?.stringValue))
        let tokensSent = fake.log().map { $0.string("token") ?? "" }
        #expect(tokensSent.filter { $0 == Self.live }.count == 3)
        #expect(tokensSent.filter { $0 == Self.gone || $0 == Self.bad }.count == 2, "each dead token was sent to once")
        #expect(!tokensSent.contains(Self.elsewhere) && !tokensSent.contains(Self.starter))

        // Reported again after it died, a dead token lives again.
        Thread.sleep(forTimeInterval: 0.01)
        let revived = try register(server, #"{"kind": "update", "activity_id": "delivery-1042", "token": "\#(Self.bad)"}"#)
        #expect(revived.object["was_dead"] == .bool(true), "\(revived.object)")
        #expect(try send(server, "delivery-1042", "update", #"{"live_activity": {"content_state": {"status": "x"}}, "dry_run": true}"#).object["devices"] == .number("2"))
    }

    @Test func aTokenThatReplacesAnotherIsSentToInsteadOfIt() throws {
        let fake = try FakeAPNsServer(scriptJSON: "{}")
        defer { fake.stop() }
        let server = try ServeProcess(config: try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 8))
        defer { _ = server.terminate() }
        let old = Self.token("d1"), new = Self.token("d2"), other = Self.token("d3")
        for token in [old, other] {
            let r = try register(server, #"{"kind": "update", "activity_id": "ride-7", "token": "\#(token)"}"#)
            #expect(r.status == 201 && r.object["replaced"] == .bool(false), "\(r.object)")
        }
        // ActivityKit gave the activity a new token: the app names the outdated one.
        let rotated = try register(server, #"{"kind": "update", "activity_id": "ride-7", "token": "\#(new)", "replaces": "\#(old.uppercased())"}"#)
        #expect(rotated.status == 201 && rotated.object["replaced"] == .bool(true), "\(rotated.object)")
        // Naming it again finds nothing to remove.
        #expect(try register(server, #"{"kind": "update", "activity_id": "ride-7", "token": "\#(new)", "replaces": "\#(old)"}"#).object["replaced"] == .bool(false))

        let update = try send(server, "ride-7", "update", #"{"live_activity": {"content_state": {"stop": 3}}}"#)
        #expect(update.status == 202 && update.object["devices"] == .number("2"), "\(update.object)")
        _ = try finished(server, try #require(update.object["id"]?.stringValue))
        #expect(Set(fake.log().map { $0.string("token") ?? "" }) == [other, new], "the outdated token is not sent to")
    }

    @Test func mistakesAreRefusedWithTheirCodes() throws {
        let fake = try FakeAPNsServer(scriptJSON: "{}")
        defer { fake.stop() }
        let server = try ServeProcess(config: try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 8))
        defer { _ = server.terminate() }
        func codes(_ r: (status: Int, object: JSONObject)) -> [String] {
            (r.object["errors"]?.arrayValue ?? []).compactMap { e in
                guard let o = e.objectValue else { return nil }
                return (o["pointer"]?.stringValue ?? o["parameter"]?.stringValue ?? "") + " " + (o["code"]?.stringValue ?? "")
            }
        }
        let noActivity = try register(server, #"{"kind": "update", "token": "\#(Self.live)"}"#)
        #expect(noActivity.status == 422 && codes(noActivity) == ["/activity_id missing"])
        let startWithActivity = try register(server, #"{"kind": "push-to-start", "activity_id": "a", "token": "\#(Self.live)"}"#)
        #expect(codes(startWithActivity) == ["/activity_id conflictingFields"])
        #expect(codes(try register(server, #"{"kind": "later", "token": "zz", "extra": 1}"#)) == ["/extra unknownKey", "/kind invalidValue", "/token invalidToken"])
        #expect(codes(try register(server, #"{"kind": "update", "activity_id": "a", "token": "\#(Self.live)", "replaces": "\#(Self.live)"}"#)) == ["/replaces conflictingFields"])
        #expect(codes(try register(server, #"{"kind": "push-to-start", "token": "\#(Self.live)", "replaces": 7}"#)) == ["/replaces wrongType"])
        let unknown = try send(server, "nobody", "update", #"{"live_activity": {"content_state": {}}}"#)
        #expect(unknown.status == 404 && codes(unknown) == ["activity unknownActivity"], "\(unknown.object)")
        _ = try register(server, #"{"kind": "update", "activity_id": "a-1", "token": "\#(Self.live)"}"#)
        #expect(codes(try send(server, "a-1", "update", #"{"live_activity": {"event": "end"}}"#)) == ["/live_activity/event conflictingFields"])
        #expect(codes(try send(server, "a-1", "update", #"{"devices": ["\#(Self.live)"]}"#)) == ["/devices invalidValue"])
        // The planner's rules, as for any campaign: an update without content is refused.
        let empty = try send(server, "a-1", "update", "{}")
        #expect(empty.status == 422 && codes(empty) == ["/live_activity/content_state liveActivityRequiresMember"], "\(empty.object)")
        #expect(fake.log().isEmpty, "nothing was sent")
    }
}
