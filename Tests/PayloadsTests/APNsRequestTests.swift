import APNsCore
import Testing
import Payloads

extension APNsRequest {
    /// A header as it goes on the wire (`forEachHeader`), looked up by name: for the tests
    /// that check what a campaign renders.
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

@Suite struct APNsRequestTests {
    @Test func theTypedFieldsAreWrittenInApplesOrder() {
        var r = APNsRequest(deviceToken: "ab", path: "/3/device/ab", pushType: .alert, topic: "com.example", priority: 10,
                            body: Array("{}".utf8))
        #expect(r.method == "POST" && !r.isBroadcast)
        #expect(r.headers == [HTTPHeader("apns-push-type", "alert"), HTTPHeader("apns-topic", "com.example"),
                              HTTPHeader("apns-priority", "10")], "no apns-id: APNs chooses it")
        r.expiration = 0
        r.collapseId = "c"
        r.apnsID = "00000000-0000-4000-8000-000000000001"
        #expect(r.headers.map(\.name) == ["apns-push-type", "apns-topic", "apns-priority", "apns-expiration", "apns-collapse-id", "apns-id"])
    }

    @Test func aBroadcastHasAChannelAndARequestIDInsteadOfATopicAndAnAPNsID() {
        let r = APNsRequest(deviceToken: "Y2g=", path: "/4/broadcasts/apps/com.example", pushType: .liveactivity, topic: nil,
                            channel: "Y2g=", priority: 5, expiration: 0, apnsID: "00000000-0000-4000-8000-000000000002",
                            body: Array("{}".utf8))
        #expect(r.isBroadcast)
        #expect(r.headers == [HTTPHeader("apns-push-type", "liveactivity"), HTTPHeader("apns-channel-id", "Y2g="),
                              HTTPHeader("apns-priority", "5"), HTTPHeader("apns-expiration", "0"),
                              HTTPHeader("apns-request-id", "00000000-0000-4000-8000-000000000002")])
    }

    @Test func aTopicOverrideReplacesTheTopicAndLeavesABroadcastAlone() {
        let device = APNsRequest(deviceToken: "ab", path: "/3/device/ab", pushType: .voip, topic: "com.example.voip", priority: 10,
                                 apnsID: "id", body: [])
        let replaced = device.replacingTopic(with: "com.example.other")
        #expect(replaced.topic == "com.example.other" && replaced.header("apns-topic") == "com.example.other")
        #expect(replaced.headers.map(\.name) == device.headers.map(\.name), "same place, same order")
        let broadcast = APNsRequest(deviceToken: "Y2g=", path: "/4/broadcasts/apps/com.example", pushType: .liveactivity, topic: nil,
                                    channel: "Y2g=", priority: 10, body: [])
        #expect(broadcast.replacingTopic(with: "com.example.other") == broadcast)
    }
}
