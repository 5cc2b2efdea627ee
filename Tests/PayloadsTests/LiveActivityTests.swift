import Foundation
import Payloads
import StrictJSON
import Testing

/// ActivityKit push notifications (Apple, "Starting and updating Live Activities with
/// ActivityKit push notifications"): the exact `aps` of each event, and every rule Apple
/// documents checked before anything is sent, each with its code.
@Suite struct LiveActivityTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#
    static let now: Int64 = 1_796_140_800  // 2026-12-01T16:00:00Z

    static func planner() -> CampaignPlanner {
        var planner = Fixtures.planner()
        planner.now = { now }
        return planner
    }

    func plan(_ json: String) -> Result<CampaignPlan, CampaignRejection> {
        Self.planner().plan(jsonBytes: Array(json.utf8))
    }

    func body(_ json: String) throws -> String {
        let plan = try plan(json).get()
        return String(decoding: try plan.body(for: try #require(plan.devices.first)).bytes, as: UTF8.self)
    }

    func codes(_ json: String) -> [String] {
        guard case .failure(let rejection) = plan(json) else { return [] }
        return rejection.problems.map { "\($0.path): \($0.stableCode)" }
    }

    @Test func anUpdateIsTimestampEventAndContentStateWithItsTopicAndPushType() throws {
        let json = #"{"live_activity": {"event": "update", "content_state": {"status": "on the way", "etaMinutes": 8}}, \#(device)}"#
        #expect(try body(json) == #"{"aps":{"timestamp":1796140800,"event":"update","content-state":{"status":"on the way","etaMinutes":8}}}"#)
        let request = try plan(json).get().request(for: Device(token: Fixtures.tokenA), apnsID: APNsID.sequential(1))
        #expect(request.header("apns-push-type") == "liveactivity", "live_activity implies the push type")
        #expect(request.header("apns-topic") == "com.example.shop.push-type.liveactivity")
        #expect(request.header("apns-priority") == "10")
    }

    @Test func aStartCarriesAttributesAndAnAlertAndMayAskForAnUpdateToken() throws {
        let json = #"""
        {"live_activity": {"event": "start", "timestamp": 1796140000, "attributes_type": "DeliveryAttributes",
                           "attributes": {"orderNumber": 1042}, "content_state": {"status": "preparing"},
                           "stale_date": "2026-12-01T17:00:00Z", "relevance_score": 100, "input_push_token": true},
         "alert": {"title": "Order 1042", "body": "Preparing"}, "sound": "chime.aiff", \#(device)}
        """#
        #expect(try body(json) == #"{"aps":{"timestamp":1796140000,"event":"start","content-state":{"status":"preparing"},"stale-date":1796144400,"relevance-score":100,"attributes-type":"DeliveryAttributes","attributes":{"orderNumber":1042},"input-push-token":1,"alert":{"title":"Order 1042","body":"Preparing","sound":"chime.aiff"}}}"#)
        let channel = json.replacingOccurrences(of: #""input_push_token": true"#, with: #""input_push_channel": "dHN0LXNyY2gtY2hubA==""#)
        #expect(try body(channel).contains(#""input-push-channel":"dHN0LXNyY2gtY2hubA==""#))
    }

    @Test func anEndMayCarryItsFinalContentAndADismissalDate() throws {
        let json = #"{"live_activity": {"event": "end", "timestamp": 1796140800, "content_state": {"status": "delivered"}, "dismissal_date": 1796000000}, "priority": 5, \#(device)}"#
        #expect(try body(json) == #"{"aps":{"timestamp":1796140800,"event":"end","content-state":{"status":"delivered"},"dismissal-date":1796000000}}"#,
                "a dismissal date in the past dismisses it at once")
        #expect(try body(#"{"live_activity": {"event": "end"}, \#(device)}"#) == #"{"aps":{"timestamp":1796140800,"event":"end"}}"#)
    }

    @Test func theTimestampDefaultsToSendAtWhenScheduled() throws {
        let json = #"{"live_activity": {"event": "update", "content_state": {}}, "send_at": "2026-12-01T18:00:00Z", \#(device)}"#
        #expect(try body(json).hasPrefix(#"{"aps":{"timestamp":1796148000,"#))
    }

    @Test func locKeysTakeApplesLocalizedForm() throws {
        let json = #"{"live_activity": {"event": "update", "content_state": {}}, "alert": {"title-loc-key": "HERO_%@", "title-loc-args": ["Panda"], "loc-key": "FOUND"}, \#(device)}"#
        #expect(try body(json).contains(#""alert":{"title":{"loc-key":"HERO_%@","loc-args":["Panda"]},"body":{"loc-key":"FOUND"}}"#))
    }

    @Test func eachEventNeedsWhatAppleSays() {
        #expect(codes(#"{"live_activity": {"event": "start"}, \#(device)}"#) == [
            "live_activity.content_state: liveActivityRequiresMember",
            "live_activity.attributes_type: liveActivityRequiresMember",
            "live_activity.attributes: liveActivityRequiresMember",
            "alert: liveActivityRequiresMember",
        ])
        #expect(codes(#"{"live_activity": {"event": "update"}, \#(device)}"#) == ["live_activity.content_state: liveActivityRequiresMember"])
        #expect(codes(#"{"push_type": "liveactivity", "alert": "x", \#(device)}"#).contains("live_activity: missing"))
        #expect(codes(#"{"live_activity": {"content_state": {}}, \#(device)}"#) == ["live_activity.event: missing"])
        #expect(codes(#"{"live_activity": {"event": "pause", "content_state": {}}, \#(device)}"#) == ["live_activity.event: invalidValue"])
    }

    @Test func eachEventForbidsWhatItHasNoPlaceFor() {
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {}, "dismissal_date": 1, "attributes_type": "A", "attributes": {}, "input_push_token": true, "input_push_channel": "YWJj"}, \#(device)}"#) == [
            "live_activity.dismissal_date: liveActivityForbidsMember",
            "live_activity.attributes_type: liveActivityForbidsMember",
            "live_activity.attributes: liveActivityForbidsMember",
            "live_activity.input_push_token: liveActivityForbidsMember",
            "live_activity.input_push_channel: liveActivityForbidsMember",
        ])
        #expect(codes(#"{"live_activity": {"event": "end", "stale_date": 1796150000}, \#(device)}"#) == ["live_activity.stale_date: liveActivityForbidsMember"])
        #expect(codes(#"{"live_activity": {"event": "start", "content_state": {}, "attributes_type": "A", "attributes": {}, "input_push_token": true, "input_push_channel": "YWJj"}, "alert": {"title": "t", "body": "b"}, \#(device)}"#)
                == ["live_activity.input_push_channel: conflictingFields"])
    }

    @Test func membersAnActivityKitPushHasNoPlaceForAreNamed() {
        #expect(codes(#"""
        {"live_activity": {"event": "update", "content_state": {}}, "badge": 1, "category": "C", "thread_id": "t",
         "content_available": true, "mutable_content": true, "target_content_id": "x", "interruption_level": "active",
         "relevance_score": 0.5, \#(device)}
        """#) == ["badge", "category", "thread_id", "content_available", "mutable_content", "target_content_id", "interruption_level", "relevance_score"]
            .map { "\($0): liveActivityForbidsMember" })
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {}}, "alert": {"title": "t", "subtitle": "s", "body": "b"}, \#(device)}"#)
                == ["alert.subtitle: liveActivityForbidsMember"])
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {}}, "alert": {"title": "t", "body": "b"}, "sound": {"critical": 1, "name": "a.caf"}, \#(device)}"#)
                == ["sound: liveActivityForbidsMember"])
    }

    @Test func anAlertHasATitleAndABodyAndASoundNeedsAnAlert() {
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {}}, "alert": "only a body", \#(device)}"#) == ["alert: liveActivityRequiresMember"])
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {}}, "sound": "default", \#(device)}"#) == ["alert: liveActivityRequiresMember"])
    }

    @Test(arguments: [(10, true), (5, true), (1, false)])
    func prioritiesAppleAllows(_ priority: Int, _ allowed: Bool) {
        let found = codes(#"{"live_activity": {"event": "update", "content_state": {}}, "priority": \#(priority), \#(device)}"#)
        #expect(found == (allowed ? [] : ["priority: liveActivityPriority"]))
    }

    @Test func datesAreInOrder() {
        #expect(codes(#"{"live_activity": {"event": "update", "timestamp": 1796140800, "stale_date": 1796140800, "content_state": {}}, \#(device)}"#)
                == ["live_activity.stale_date: liveActivityDateOrder"])
        #expect(codes(#"{"live_activity": {"event": "end", "timestamp": 1796140800, "dismissal_date": 1796155201}, \#(device)}"#)
                == ["live_activity.dismissal_date: liveActivityDateOrder"], "more than four hours after")
        #expect(codes(#"{"live_activity": {"event": "end", "timestamp": 1796140800, "dismissal_date": 1796155200}, \#(device)}"#).isEmpty)
        #expect(codes(#"{"live_activity": {"event": "update", "timestamp": "yesterday", "content_state": {}}, \#(device)}"#) == ["live_activity.timestamp: invalidValue"])
    }

    @Test func valuesAreChecked() {
        #expect(codes(#"{"live_activity": {"event": "start", "content_state": {}, "attributes_type": "Delivery Attributes", "attributes": {}, "input_push_channel": "not base64!"}, "alert": {"title": "t", "body": "b"}, \#(device)}"#)
                == ["live_activity.attributes_type: invalidValue", "live_activity.input_push_channel: invalidValue"])
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {"n": 1e999}, "relevance_score": -1}, \#(device)}"#)
                == ["live_activity.content_state.n: unsafeNumber", "live_activity.relevance_score: invalidValue"])
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": [1], "color": "red"}, \#(device)}"#)
                == ["live_activity.color: unknownKey", "live_activity.content_state: wrongType"], "unreadable, not also missing")
        #expect(codes(#"{"push_type": "alert", "live_activity": {"event": "update", "content_state": {}}, \#(device)}"#) == ["alert: nothingToSend", "push_type: conflictingFields"])
    }

    @Test func theWholeBodyIsWithinAppleLimit() {
        let big = String(repeating: "x", count: 4100)
        #expect(codes(#"{"live_activity": {"event": "update", "content_state": {"text": "\#(big)"}}, \#(device)}"#) == ["devices[0]: payloadTooLarge"])
    }
}
