import APNsCore
import Foundation
import Payloads
import StrictJSON
import Testing

/// A campaign whose audience is a broadcast channel (Apple, "Sending broadcast push
/// notification requests to APNs"): the one request it makes, byte for byte, and the
/// local rules with their codes.
@Suite struct ChannelCampaignTests {
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let update = #""live_activity": {"event": "update", "timestamp": 1796140800, "content_state": {"home": 2, "away": 1}}"#

    func plan(_ json: String) -> Result<CampaignPlan, CampaignRejection> {
        Fixtures.plan(json)
    }

    @Test func aChannelCampaignIsOneBroadcastRequestToTheAppsBroadcastPath() throws {
        let json = #"{"channel": "\#(Self.channel)", \#(Self.update), "priority": 5, "expiration": 0}"#
        let plan = try plan(json).get()
        #expect(plan.channel == Self.channel && plan.pushType == .liveactivity, "a channel implies the liveactivity push type")
        #expect(plan.devices.map(\.token) == [Self.channel], "the channel is the campaign's one recipient")
        let request = plan.plannedRequest(forDeviceAt: 0, apnsID: APNsID.sequential(1))
        #expect(request.path == "/4/broadcasts/apps/com.example.shop")
        #expect(request.headers == [
            HTTPHeader("apns-push-type", "liveactivity"), HTTPHeader("apns-channel-id", Self.channel),
            HTTPHeader("apns-priority", "5"), HTTPHeader("apns-expiration", "0"),
            HTTPHeader("apns-request-id", APNsID.sequential(1)),
        ], "no apns-topic (the bundle id is in the path) and no apns-id")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"timestamp":1796140800,"event":"update","content-state":{"home":2,"away":1}}}"#)
        // The request built from the plan again (as `send` and the outbox do) is the same.
        #expect(try plan.request(for: plan.devices[0], apnsID: APNsID.sequential(1)) == request)
    }

    @Test func theStoredMessageBuildsTheSameRequest() throws {
        let plan = try plan(#"{"channel": "\#(Self.channel)", \#(Self.update)}"#).get()
        var message = plan.message
        #expect(message.channel == Self.channel && message.bundleId == "com.example.shop")
        message.channel = nil
        #expect(message.request(to: Fixtures.tokenA, apnsID: APNsID.sequential(1), body: []).path == "/3/device/\(Fixtures.tokenA)")
    }

    @Test func anEndAndLowPriorityAreBroadcastsToo() throws {
        let plan = try plan(#"{"channel": "\#(Self.channel)", "live_activity": {"event": "end", "timestamp": 1796140800}, "priority": 1}"#).get()
        #expect(plan.priority == 1, "Apple's broadcast page names low priority beside medium and high")
        #expect(Fixtures.codes(#"{"live_activity": {"event": "update", "content_state": {}}, "priority": 1, "devices": ["\#(Fixtures.tokenA)"]}"#)
                == ["priority: liveActivityPriority"], "a Live Activity push to a device is still 10 or 5")
    }

    @Test func everyRuleHasItsCode() {
        let cases: [(String, [String])] = [
            (#"{"channel": "not base64!", \#(Self.update)}"#, ["channel: invalidChannelId"]),
            (#"{"channel": "abc", \#(Self.update)}"#, ["channel: invalidChannelId"]),
            (#"{"channel": "\#(Self.channel)", \#(Self.update), "devices": ["\#(Fixtures.tokenA)"]}"#, ["devices: conflictingFields"]),
            (#"{"channel": "\#(Self.channel)", "alert": "Goal!"}"#, ["live_activity: missing"]),
            (#"{"channel": "\#(Self.channel)", "push_type": "alert", "alert": "Goal!"}"#, ["push_type: channelRequiresLiveActivity"]),
            (#"{"channel": "\#(Self.channel)", \#(Self.update), "collapse_id": "score"}"#, ["collapse_id: channelForbidsMember"]),
            (#"{"channel": "\#(Self.channel)", "live_activity": {"event": "start", "content_state": {}, "attributes_type": "Match", "attributes": {}}, "alert": {"title": "Kick-off", "body": "Now"}}"#,
             ["live_activity.event: channelForbidsMember"]),
            (#"{"channel": "\#(Self.channel)", \#(Self.update), "priority": 7}"#, ["priority: invalidPriority"]),
            (#"{"channel": 12, \#(Self.update)}"#, ["channel: wrongType", "devices: noDevices"]),
        ]
        for (json, expected) in cases {
            #expect(Fixtures.codes(json) == expected, "\(json)")
        }
    }

    @Test func aVariableTheCampaignDoesNotGiveIsMissingAtVariables() throws {
        let problems = Fixtures.problems(#"{"channel": "\#(Self.channel)", "template": "delivery_status", "variables": {"eta": "8 min"}}"#)
        #expect(problems.map { "\($0.path): \($0.stableCode)" } == ["variables: missingVariable"], "a channel has no per-device values")
        let plan = try plan(#"{"channel": "\#(Self.channel)", "template": "delivery_status", "variables": {"status": "on the way", "eta": "8 min"}}"#).get()
        #expect(String(decoding: plan.plannedRequest(forDeviceAt: 0, apnsID: APNsID.sequential(1)).body, as: UTF8.self)
            .contains(#""content-state":{"status":"on the way","eta":"8 min"}"#))
    }
}
