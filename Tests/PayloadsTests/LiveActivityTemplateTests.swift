import Payloads
import StrictJSON
import Testing

/// A template's `live_activity`: each device's content state from its variables, numbers
/// checked as numbers, with the same local rules as a campaign's own content.
@Suite struct LiveActivityTemplateTests {
    static let templates = TemplateLibrary([Self.delivery])
    static let delivery: Template = {
        let json = #"""
        {"strings": {"title": "Your delivery", "body": "It is {{status}}."},
         "live_activity": {"content_state": {"status": "{{status}}", "etaMinutes": "{{eta}}", "driver": {"name": "Ann {{surname}}"}, "stops": ["{{eta}}", 3]},
                           "numbers": ["eta"], "attributes_type": "DeliveryAttributes", "attributes": {"orderId": "{{order_id}}"}}}
        """#
        return try! Template.parse(jsonBytes: Array(json.utf8), name: "delivery").get()
    }()

    func plan(_ members: String, devices: String) -> Result<CampaignPlan, CampaignRejection> {
        Fixtures.planner(templates: Self.templates).plan(jsonBytes: Array(#"{"template": "delivery", \#(members), "devices": [\#(devices)]}"#.utf8))
    }

    func device(_ token: String, _ variables: String) -> String { #"{"token": "\#(token)", "variables": {\#(variables)}}"# }

    @Test func eachDeviceGetsItsOwnContentStateWithNumbersAsNumbers() throws {
        let plan = try plan(#""live_activity": {"event": "update", "timestamp": 1764609600}"#,
                            devices: device(Fixtures.tokenA, #""status": "on the way", "eta": "8", "surname": "Lee""#) + ", "
                                + device(Fixtures.tokenB, #""status": "here", "eta": "0.5", "surname": "Kim""#)).get()
        #expect(plan.pushType == .liveactivity, "a Live Activity template implies the push type")
        #expect(plan.topic == "com.example.shop.push-type.liveactivity")
        let bodies = try plan.devices.map { String(decoding: try plan.body(for: $0).bytes, as: UTF8.self) }
        #expect(bodies[0] == #"{"aps":{"timestamp":1764609600,"event":"update","content-state":{"status":"on the way","etaMinutes":8,"driver":{"name":"Ann Lee"},"stops":[8,3]},"alert":{"title":"Your delivery","body":"It is on the way."}}}"#)
        #expect(bodies[1] == #"{"aps":{"timestamp":1764609600,"event":"update","content-state":{"status":"here","etaMinutes":0.5,"driver":{"name":"Ann Kim"},"stops":[0.5,3]},"alert":{"title":"Your delivery","body":"It is here."}}}"#)
    }

    @Test func aStartTakesTheTemplatesAttributesAndAnEndNoContent() throws {
        let vars = #""status": "packed", "eta": "30", "surname": "Lee", "order_id": "A-17""#
        let start = try plan(#""live_activity": {"event": "start", "timestamp": 1764609600}"#, devices: device(Fixtures.tokenA, vars)).get()
        let body = String(decoding: try start.body(for: start.devices[0]).bytes, as: UTF8.self)
        #expect(body.contains(#""attributes-type":"DeliveryAttributes","attributes":{"orderId":"A-17"}"#), "\(body)")
        #expect(body.contains(#""etaMinutes":30"#))
        // An end says only what the campaign says: no content state from the template.
        let end = try plan(#""live_activity": {"event": "end", "timestamp": 1764609600, "dismissal_date": 1764609600}"#,
                           devices: device(Fixtures.tokenA, #""status": "delivered""#)).get()
        let ended = String(decoding: try end.body(for: end.devices[0]).bytes, as: UTF8.self)
        #expect(!ended.contains("content-state") && !ended.contains("attributes"), "\(ended)")
        // The campaign's own content state wins over the template's.
        let own = try plan(#""live_activity": {"event": "update", "timestamp": 1764609600, "content_state": {"status": "fixed"}}"#,
                           devices: device(Fixtures.tokenA, #""status": "x""#)).get()
        #expect(String(decoding: try own.body(for: own.devices[0]).bytes, as: UTF8.self).contains(#""content-state":{"status":"fixed"}"#))
    }

    @Test func aValueThatIsNotANumberOrIsMissingIsRefusedPerDevice() {
        let bad = plan(#""live_activity": {"event": "update"}"#,
                       devices: device(Fixtures.tokenA, #""status": "x", "eta": "soon", "surname": "Lee""#) + ", "
                           + device(Fixtures.tokenB, #""status": "x", "surname": "Lee""#) + ", "
                           + device(String(repeating: "ef", count: 32), #""status": "x", "eta": "1e999", "surname": "Lee""#))
        guard case .failure(let rejection) = bad else { Issue.record("accepted"); return }
        #expect(rejection.problems.map { "\($0.path): \($0.stableCode)" }
                == ["devices[0]: invalidValue", "devices[1]: missingVariable", "devices[2]: invalidValue"])
        #expect(rejection.problems[0].message.contains(#"expected a JSON number like 12 or 4.5, found "soon""#))
        #expect(rejection.problems[2].message.contains("beyond the range of a double"))
    }

    @Test func theSameLocalRulesApply() {
        func codes(_ members: String) -> [String] {
            switch plan(members, devices: device(Fixtures.tokenA, #""status": "x", "eta": "1", "surname": "Lee", "order_id": "A""#)) {
            case .success: return []
            case .failure(let r): return r.problems.map { "\($0.path): \($0.stableCode)" }
            }
        }
        #expect(codes(#""live_activity": {"event": "update"}, "priority": 1"#) == ["priority: liveActivityPriority"])
        #expect(codes(#""push_type": "alert", "live_activity": {"event": "update"}"#) == ["push_type: conflictingFields"])
        #expect(codes(#""push_type": "alert""#) == ["push_type: conflictingFields"])
        #expect(codes(#""live_activity": {"event": "update", "attributes": {"a": 1}}"#) == ["live_activity.attributes: liveActivityForbidsMember"])
        #expect(codes(#""live_activity": {"event": "update"}, "badge": 1"#) == ["badge: liveActivityForbidsMember"])
        #expect(codes(#""badge": 1"#) == ["badge: liveActivityForbidsMember"], "without live_activity it is an update")
        #expect(codes("\"priority\": 5") == [])
    }

    @Test func templateFilesAreCheckedWhenRead() {
        func problems(_ section: String) -> [String] {
            let json = #"{"strings": {"body": "x"}, "live_activity": \#(section)}"#
            switch Template.parse(jsonBytes: Array(json.utf8), name: "t") {
            case .success: return []
            case .failure(let r): return r.problems.map { "\($0.path): \($0.stableCode)" }
            }
        }
        #expect(problems(#"{"content_state": {"a": "{{a}}"}}"#) == [])
        #expect(problems(#"{}"#) == ["live_activity.content_state: missing"])
        #expect(problems(#"{"content_state": []}"#) == ["live_activity.content_state: wrongType"])
        #expect(problems(#"{"content_state": {"a": "{{a}} min"}, "numbers": ["a"]}"#)
                == ["live_activity.content_state.a: invalidTemplate"])
        #expect(problems(#"{"content_state": {"a": 1}, "numbers": ["b"]}"#) == ["live_activity.numbers[0]: invalidTemplate"])
        #expect(problems(#"{"content_state": {"a": "{{a"}}"#) == ["live_activity.content_state.a: invalidTemplate"])
        #expect(problems(#"{"content_state": {"a": 1e999}}"#) == ["live_activity.content_state.a: unsafeNumber"])
        #expect(problems(#"{"content_state": {"a": 1}, "attributes_type": "9x"}"#) == ["live_activity.attributes_type: invalidValue"])
        #expect(problems(#"{"content_state": {"a": 1}, "unknown": 1}"#) == ["live_activity.unknown: unknownKey"])
        // A Live Activity template needs no alert text, and makes liveactivity pushes only.
        let bare = #"{"live_activity": {"content_state": {"a": 1}}}"#
        #expect(throws: Never.self) { try Template.parse(jsonBytes: Array(bare.utf8), name: "t").get() }
        let mixed = #"{"defaults": {"push_type": "alert"}, "live_activity": {"content_state": {"a": 1}}}"#
        guard case .failure(let r) = Template.parse(jsonBytes: Array(mixed.utf8), name: "t") else { Issue.record("accepted"); return }
        #expect(r.problems.map(\.path.description) == ["defaults.push_type"])
        // Its placeholders are the template's variables.
        #expect(Self.delivery.variables.map(\.name) == ["status", "eta", "surname", "order_id"])
    }
}
