import Payloads
import Testing

/// The push types whose body Apple fixes: `widgets` reloads a widget's timelines
/// (`{"aps":{"content-changed":true}}`), `mdm` makes a managed device poll its MDM server
/// (`{"mdm": PushMagic}`, nothing else).
@Suite struct FixedBodyTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func aWidgetsPushIsContentChangedOnItsOwnTopic() throws {
        let json = #"{"push_type": "widgets", \#(device)}"#
        #expect(try Fixtures.firstBody(json) == #"{"aps":{"content-changed":true}}"#)
        let request = try Fixtures.firstRequest(json)
        #expect(request.header("apns-push-type") == "widgets")
        #expect(request.header("apns-topic") == "com.example.shop.push-type.widgets")
    }

    @Test func aControlsPushIsContentChangedOnItsOwnTopic() throws {
        let json = #"{"push_type": "controls", "expiration": 0, \#(device)}"#
        #expect(try Fixtures.firstBody(json) == #"{"aps":{"content-changed":true}}"#)
        let request = try Fixtures.firstRequest(json)
        #expect(request.header("apns-push-type") == "controls")
        #expect(request.header("apns-topic") == "com.example.shop.push-type.controls")
        #expect(Fixtures.codes(#"{"push_type": "controls", "alert": "x", \#(device)}"#) == ["alert: pushTypeForbidsMember"])
    }

    @Test func aWidgetsPushCarriesNothingElse() {
        #expect(Fixtures.codes(#"{"push_type": "widgets", "alert": "x", "badge": 1, "sound": "default", "deeplink": "https://example.com/profile", "data": {"a": 1}, \#(device)}"#)
                == ["alert", "badge", "sound", "deeplink", "data"].map { "\($0): pushTypeForbidsMember" })
        #expect(Fixtures.codes(#"{"push_type": "widgets", "template": "order_ready", "variables": {"order_id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "store_name": "x"}, \#(device)}"#)
                .contains("template: pushTypeForbidsMember"))
    }

    /// The MDM body as a sender authenticated with the MDM push certificate would send it
    /// (pushgate itself signs with tokens, so it refuses every mdm campaign).
    func certificatePlan(_ json: String) -> Result<CampaignPlan, CampaignRejection> {
        var planner = Fixtures.planner()
        planner.authentication = .certificate
        return planner.plan(jsonBytes: Array(json.utf8))
    }

    func certificateCodes(_ json: String) -> [String] {
        guard case .failure(let r) = certificatePlan(json) else { return [] }
        return r.problems.map { "\($0.path): \($0.stableCode)" }
    }

    @Test func anMDMPushIsThePushMagicOfEachDevice() throws {
        let plan = try certificatePlan(#"""
        {"mdm": "{{push_magic}}", "devices": [{"token": "\#(Fixtures.tokenA)", "variables": {"push_magic": "1AA91790-BA78-4DBF-9102-FBA06E6110C4"}},
                                              {"token": "\#(Fixtures.tokenB)", "variables": {"push_magic": "372A55DA-E93B-4E89-9F91-264BA1B1E18C"}}]}
        """#).get()
        #expect(plan.pushType == .mdm, "mdm implies the push type")
        #expect(plan.topic == "com.example.shop", "the topic is the app's as configured (the MDM push certificate's UID)")
        let bodies = try plan.devices.map { String(decoding: try plan.body(for: $0).bytes, as: UTF8.self) }
        #expect(bodies == [#"{"mdm":"1AA91790-BA78-4DBF-9102-FBA06E6110C4"}"#, #"{"mdm":"372A55DA-E93B-4E89-9F91-264BA1B1E18C"}"#])
        let one = try certificatePlan(#"{"mdm": "ABC", \#(device)}"#).get()
        #expect(String(decoding: try one.body(for: one.devices[0]).bytes, as: UTF8.self) == #"{"mdm":"ABC"}"#)
    }

    @Test func anMDMPushNeedsItsPushMagicAndNothingElse() {
        #expect(certificateCodes(#"{"push_type": "mdm", \#(device)}"#) == ["mdm: missing"])
        #expect(certificateCodes(#"{"mdm": "ABC", "alert": "x", "data": {"a": 1}, \#(device)}"#)
                == ["alert: pushTypeForbidsMember", "data: pushTypeForbidsMember"])
        #expect(certificateCodes(#"{"mdm": "{{push_magic}}", \#(device)}"#) == ["devices[0]: missingVariable"])
        #expect(certificateCodes(#"{"mdm": "ABC", "push_type": "alert", \#(device)}"#) == ["alert: nothingToSend", "push_type: conflictingFields"])
        #expect(certificateCodes(#"{"mdm": "", \#(device)}"#) == ["mdm: invalidValue"])
    }
}
