import APNsCore
import DeepLinks
import Payloads
import StrictJSON
import Testing

@Suite struct PushTypeTests {
    static let expectedTopics: [PushType: String] = [
        .alert: "com.example.shop",
        .background: "com.example.shop",
        .mdm: "com.example.shop",
        .voip: "com.example.shop.voip",
        .complication: "com.example.shop.complication",
        .fileprovider: "com.example.shop.pushkit.fileprovider",
        .location: "com.example.shop.location-query",
        .liveactivity: "com.example.shop.push-type.liveactivity",
        .pushtotalk: "com.example.shop.voip-ptt",
        .widgets: "com.example.shop.push-type.widgets",
        .controls: "com.example.shop.push-type.controls",
    ]

    @Test(arguments: PushType.allCases)
    func headersForEveryPushType(_ type: PushType) throws {
        // Each push type with the least its body needs.
        let message = switch type {
        case .background, .widgets, .controls: ""
        case .mdm: #""mdm": "ABC", "#
        case .liveactivity: #""live_activity": {"event": "update", "content_state": {}}, "#
        default: #""alert": "x", "#
        }
        // MDM as a certificate-authenticated sender would send it (pushgate refuses it: it signs with tokens).
        var planner = Fixtures.planner()
        planner.authentication = type == .mdm ? .certificate : .token
        let plan = try planner.plan(jsonBytes: Array(#"{\#(message)"push_type": "\#(type.rawValue)", "devices": ["\#(Fixtures.tokenA)"]}"#.utf8)).get()
        let r = try plan.request(for: plan.devices[0], apnsID: APNsID.sequential(1))
        #expect(r.headers.map(\.name) == ["apns-push-type", "apns-topic", "apns-priority", "apns-id"])
        #expect(r.header("apns-push-type") == type.rawValue)
        #expect(r.header("apns-topic") == Self.expectedTopics[type])
        #expect(r.header("apns-priority") == (type == .background ? "5" : "10"))
        #expect(r.path == "/3/device/" + Fixtures.tokenA)
        #expect(r.method == "POST")
    }

    @Test func limitsAre4096And5120ForVoIP() {
        for type in PushType.allCases {
            #expect(type.payloadLimit == (type == .voip ? 5120 : 4096))
        }
    }

    @Test func optionalHeadersComeInFixedOrder() throws {
        let r = try Fixtures.firstRequest(#"{"alert": "x", "priority": 1, "collapse_id": "c", "expiration": 5, "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(r.headers == [
            HTTPHeader("apns-push-type", "alert"), HTTPHeader("apns-topic", "com.example.shop"),
            HTTPHeader("apns-priority", "1"), HTTPHeader("apns-expiration", "5"),
            HTTPHeader("apns-collapse-id", "c"), HTTPHeader("apns-id", "00000000-0000-4000-8000-000000000001"),
        ])
    }

    @Test func randomIdsAreLowercaseVersion4UUIDs() throws {
        let plan = try Fixtures.plan(#"{"alert": "x", "devices": ["\#(Fixtures.tokenA)"]}"#).get()
        let device = try #require(plan.devices.first)
        var fast = APNsIDRandom()
        let ids = try (0..<50).map { _ in try plan.request(for: device).header("apns-id") ?? "" }
            + (0..<50).map { _ in try plan.request(for: device, using: &fast).header("apns-id") ?? "" }
        #expect(Set(ids).count == 100)
        for id in ids {
            let b = Array(id.utf8)
            #expect(b.count == 36)
            #expect(b[8] == 0x2D && b[13] == 0x2D && b[18] == 0x2D && b[23] == 0x2D)
            #expect(b[14] == UInt8(ascii: "4"))
            #expect([UInt8]("89ab".utf8).contains(b[19]))
            #expect(id == id.lowercased())
        }
    }
}

@Suite struct AppleRuleTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func backgroundPushCarriesContentAvailableAndPriority5() throws {
        let body = try Fixtures.firstBody(#"{"push_type": "background", "data": {"sync": "inbox"}, \#(device)}"#)
        #expect(body == #"{"aps":{"content-available":1},"sync":"inbox"}"#)
    }

    @Test func backgroundRulesAreNamed() {
        let codes = Fixtures.codes(#"{"push_type": "background", "alert": "x", "sound": "default", "badge": 1, "priority": 10, "content_available": false, \#(device)}"#)
        #expect(codes == [
            "content_available: backgroundRequiresContentAvailable",
            "priority: backgroundRequiresPriority5",
            "alert: backgroundForbidsAlert",
            "sound: backgroundForbidsSound",
            "badge: backgroundForbidsBadge",
        ])
    }

    @Test func backgroundFromATemplateWithSoundIsRefused() {
        let codes = Fixtures.codes(#"{"template": "order_ready", "push_type": "background", "variables": {"order_id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "store_name": "x"}, \#(device)}"#)
        #expect(codes == ["template: backgroundForbidsAlert", "template: backgroundForbidsSound"])
    }

    @Test(arguments: ["10", "5", "1"])
    func allowedPriorities(_ p: String) throws {
        let r = try Fixtures.firstRequest(#"{"alert": "x", "priority": \#(p), \#(device)}"#)
        #expect(r.header("apns-priority") == p)
    }

    @Test(arguments: ["0", "2", "11", "-5", "5.0", "\"10\""])
    func otherPrioritiesAreRefused(_ p: String) {
        let codes = Fixtures.codes(#"{"alert": "x", "priority": \#(p), \#(device)}"#)
        #expect(codes.count == 1)
        #expect(["priority: invalidPriority", "priority: invalidValue", "priority: wrongType"].contains(codes.first ?? ""), "\(codes)")
    }

    @Test func collapseIdIsAtMost64Bytes() throws {
        let ok = String(repeating: "é", count: 32)  // 64 bytes
        let r = try Fixtures.firstRequest(#"{"alert": "x", "collapse_id": "\#(ok)", \#(device)}"#)
        #expect(r.header("apns-collapse-id") == ok)
        #expect(Fixtures.codes(#"{"alert": "x", "collapse_id": "\#(ok)a", \#(device)}"#) == ["collapse_id: collapseIdTooLong"])
    }

    @Test func relevanceScoreIsWithin0And1AndSentAsWritten() throws {
        #expect(try Fixtures.firstBody(#"{"alert": "x", "relevance_score": 0.25, \#(device)}"#).contains(#""relevance-score":0.25"#))
        #expect(try Fixtures.firstBody(#"{"alert": "x", "relevance_score": 1, \#(device)}"#).contains(#""relevance-score":1"#))
        #expect(Fixtures.codes(#"{"alert": "x", "relevance_score": 1.01, \#(device)}"#) == ["relevance_score: relevanceScoreOutOfRange"])
        #expect(Fixtures.codes(#"{"alert": "x", "relevance_score": -0.1, \#(device)}"#) == ["relevance_score: relevanceScoreOutOfRange"])
    }

    @Test func alertPushNeedsSomethingToShow() {
        #expect(Fixtures.codes(#"{\#(device)}"#) == ["alert: nothingToSend"])
        #expect(Fixtures.codes(#"{"badge": 3, \#(device)}"#).isEmpty)
    }

    @Test func apsKeysUseApplesNamesInFixedOrder() throws {
        let body = try Fixtures.firstBody(#"""
        {"alert": {"launch-image": "L", "loc-args": ["a", "b"], "loc-key": "LK", "subtitle-loc-args": ["s"],
                   "subtitle-loc-key": "SK", "title-loc-args": ["t"], "title-loc-key": "TK", "body": "B",
                   "subtitle": "S", "title": "T"},
         "relevance_score": 0.5, "interruption_level": "time-sensitive", "target_content_id": "win-1",
         "mutable_content": true, "content_available": 1, "category": "CAT", "thread_id": "th",
         "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.7}, "badge": 0,
         "deeplink": "https://example.com/profile?tab=orders", "data": {"z": 1, "a": [true, null]}, \#(device)}
        """#)
        #expect(body == #"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","title-loc-key":"TK","title-loc-args":["t"],"subtitle-loc-key":"SK","subtitle-loc-args":["s"],"loc-key":"LK","loc-args":["a","b"],"launch-image":"L"},"badge":0,"sound":{"critical":1,"name":"alarm.caf","volume":0.7},"thread-id":"th","category":"CAT","content-available":1,"mutable-content":1,"target-content-id":"win-1","interruption-level":"time-sensitive","relevance-score":0.5},"deeplink":"https://example.com/profile?tab=orders","route":{"name":"profile","params":{},"query":{"tab":"orders"}},"z":1,"a":[true,null]}"#)
    }

    @Test func locArgsNeedTheirKey() {
        #expect(Fixtures.codes(#"{"alert": {"loc-args": ["a"]}, \#(device)}"#) == ["alert.loc-key: missing"])
    }

    @Test func everyInterruptionLevel() throws {
        for level in InterruptionLevel.allCases {
            let body = try Fixtures.firstBody(#"{"alert": "x", "interruption_level": "\#(level.rawValue)", \#(device)}"#)
            #expect(body.contains(#""interruption-level":"\#(level.rawValue)""#))
        }
        #expect(Fixtures.codes(#"{"alert": "x", "interruption_level": "urgent", \#(device)}"#) == ["interruption_level: invalidValue"])
    }

    @Test func reservedDataKeysAreRefused() {
        #expect(Fixtures.codes(#"{"alert": "x", "data": {"deeplink": "x", "ok": 1}, \#(device)}"#) == ["data.deeplink: reservedDataKey"])
    }

    @Test func sameCampaignGivesTheSameBytes() throws {
        let json = #"{"template": "price_drop", "variables": {"product_id": "1", "product_name": "A", "new_price": "$1"}, \#(device)}"#
        #expect(try Fixtures.firstBody(json) == Fixtures.firstBody(json))
    }
}
