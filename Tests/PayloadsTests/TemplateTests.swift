import DeepLinks
import Payloads
import StrictJSON
import Testing
import Timing

@Suite struct TemplateLocaleTests {
    let orderVariables = #""variables": {"order_id": "3F2504E0-4F89-41D3-9A0C-0305E82C3301", "store_name": "Rynek"}"#
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    private func alert(_ locale: String?) throws -> JSON {
        let localePart = locale.map { #""locale": "\#($0)", "# } ?? ""
        let body = try Fixtures.firstBody(#"{"template": "order_ready", \#(localePart)\#(orderVariables), \#(device)}"#)
        return try #require(try JSONParser().parse(body)[path: "aps", "alert"])
    }

    @Test func plPLTakesItsOwnSubtitleAndFallsBackToPlForTheRest() throws {
        let a = try alert("pl-PL")
        #expect(a[path: "title"] == .string("Twoje zamówienie jest gotowe"))
        #expect(a[path: "subtitle"] == .string("Odbiór osobisty"))
        #expect(a[path: "body"]?.stringValue?.hasPrefix("Odbierz je w sklepie Rynek") == true)
    }

    @Test func plHasNoSubtitle() throws {
        let a = try alert("pl")
        #expect(a[path: "title"] == .string("Twoje zamówienie jest gotowe"))
        #expect(a[path: "subtitle"] == nil)
    }

    @Test func unknownLocalesAndNoLocaleUseTheDefault() throws {
        for locale in [nil, "de-DE", "en"] as [String?] {
            let a = try alert(locale)
            #expect(a[path: "title"] == .string("Your order is ready"), "\(String(describing: locale))")
        }
    }

    @Test func localeMatchingIgnoresCase() throws {
        #expect(try alert("PL-pl")[path: "subtitle"] == .string("Odbiór osobisty"))
    }

    @Test func templateDefaultsApplyAndTheCampaignWins() throws {
        let plan = try Fixtures.plan(#"{"template": "order_ready", \#(orderVariables), "category": "MINE", "sound": "ding.caf", \#(device)}"#).get()
        let body = try JSONParser().parse(try plan.body(for: plan.devices[0]).bytes)
        #expect(body[path: "aps", "category"] == .string("MINE"))
        #expect(body[path: "aps", "sound"] == .string("ding.caf"))
        #expect(body[path: "aps", "thread-id"] == .string("orders"))
        #expect(body[path: "aps", "interruption-level"] == .string("time-sensitive"))
        #expect(plan.pushType == .alert)
    }

    @Test func unknownTemplateIsNamed() {
        let problems = Fixtures.problems(#"{"template": "nope", \#(device)}"#)
        #expect(problems.map(\.description) == [#"template: no template named "nope" [unknownTemplate]"#])
        #expect(Fixtures.codes(#"{"template": "../etc/passwd", \#(device)}"#) == ["template: invalidValue"])
    }
}

@Suite struct TemplateVariableTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func missingVariableIsAnErrorNamingIt() {
        let problems = Fixtures.problems(#"{"template": "price_drop", "variables": {"product_id": "7", "new_price": "$3"}, \#(device)}"#)
        #expect(problems.map(\.description) == [#"devices[0]: missing variable "product_name" [missingVariable]"#])
    }

    @Test func variableMissingEverywhereIsReportedOnce() {
        let json = #"{"template": "price_drop", "variables": {"product_id": "7"}, "devices": ["\#(Fixtures.tokenA)", "\#(Fixtures.tokenB)"]}"#
        #expect(Fixtures.problems(json).map(\.description) == [
            #"variables: missing variable "product_name" (neither the campaign nor any device gives it) [missingVariable]"#,
            #"variables: missing variable "new_price" (neither the campaign nor any device gives it) [missingVariable]"#,
        ])
    }

    @Test func deviceVariablesOverrideTheCampaignsAndChangeTheLink() throws {
        let json = #"""
        {"template": "price_drop", "variables": {"product_id": "7", "product_name": "Mug", "new_price": "$3"},
         "devices": ["\#(Fixtures.tokenA)", {"token": "\#(Fixtures.tokenB)", "variables": {"product_id": "99", "new_price": "$2"}}]}
        """#
        let plan = try Fixtures.plan(json).get()
        let first = try JSONParser().parse(try plan.body(for: plan.devices[0]).bytes)
        let second = try JSONParser().parse(try plan.body(for: plan.devices[1]).bytes)
        #expect(first[path: "deeplink"] == .string("https://example.com/product/7?ref=price-drop"))
        #expect(first[path: "aps", "alert", "body"] == .string("Mug is now $3."))
        #expect(second[path: "deeplink"] == .string("https://example.com/product/99?ref=price-drop"))
        #expect(second[path: "route", "params", "id"] == .string("99"))
        #expect(second[path: "aps", "alert", "body"] == .string("Mug is now $2."))
    }

    @Test func aDeviceLinkTheRouteTableRejectsCarriesTheLinksCode() {
        let json = #"""
        {"template": "price_drop", "variables": {"product_id": "7", "product_name": "Mug", "new_price": "$3"},
         "devices": ["\#(Fixtures.tokenA)", {"token": "\#(Fixtures.tokenB)", "variables": {"product_id": "mug"}}]}
        """#
        let problems = Fixtures.problems(json)
        #expect(problems.count == 1)
        #expect(problems.first?.path.description == "devices[1]")
        #expect(problems.first?.code == .deeplinkRejected)
        #expect(problems.first?.linkCode == .invalidParameter)
    }

    @Test func hostileValuesComeOutAsTextNeverAsSyntax() throws {
        let nasty = #"a \"quote\" and \\ back\\slash 😀 \u2028 {{product_id}} </x> %2F"#
        let body = try Fixtures.firstBody(#"{"template": "price_drop", "variables": {"product_id": "7", "product_name": "\#(nasty)", "new_price": "{{new_price}}"}, \#(device)}"#)
        // Valid JSON, and the value reads back exactly as given.
        let json = try JSONParser().parse(body)
        #expect(json[path: "aps", "alert", "body"] == .string("a \"quote\" and \\ back\\slash 😀 \u{2028} {{product_id}} </x> %2F is now {{new_price}}."))
        // U+2028 is escaped in the bytes (it breaks JavaScript and some log viewers raw).
        #expect(body.contains(#"\u2028"#))
        #expect(!body.unicodeScalars.contains("\u{2028}"))
    }

    @Test func linkValuesAreEncodedAsOneSegment() {
        let pattern = try? LinkPattern.parse("https://example.com/product/{{id}}?ref={{ref}}").get()
        let link = try? pattern?.render { $0 == "id" ? "1/../2?x=y#f" : "a b&c=d" }.get()
        #expect(link == "https://example.com/product/1%2F..%2F2%3Fx%3Dy%23f?ref=a%20b%26c%3Dd")
    }

    @Test func textPlaceholdersParse() throws {
        let t = try TemplateText.parse("Hi {{ name }}, {{name}} and {{other}}!").get()
        #expect(t.variableNames == ["name", "other"])
        #expect(try t.render { $0 == "name" ? "{{other}}" : "X" }.get() == "Hi {{other}}, {{other}} and X!")
        #expect(TemplateText.parse("Hi {{name").map(\.pieces).isFailure)
        #expect(TemplateText.parse("Hi {{na-me}}").map(\.pieces).isFailure)
    }
}

@Suite struct TemplateFileTests {
    @Test func shippedTemplatesLoad() throws {
        for name in ["order_ready", "price_drop", "abandoned_cart"] {
            let t = try Fixtures.template(name)
            #expect(t.deeplink != nil)
            #expect(t.locales["pl"] != nil, "\(name) needs a Polish variant")
        }
    }

    @Test func brokenTemplateReportsEveryProblemWithItsPath() {
        let json = #"""
        {"defaults": {"push_type": "loud", "colour": 1}, "deeplink": "https://example.com/{{",
         "strings": {"title": "{{bad name}}"}, "locales": {"pl_PL": {}, "pl": {"body": 3}}}
        """#
        guard case .failure(let r) = Template.parse(jsonBytes: Array(json.utf8), name: "t") else {
            Issue.record("accepted a broken template")
            return
        }
        #expect(r.problems.map { "\($0.path): \($0.stableCode)" } == [
            "defaults.colour: unknownKey",
            "defaults.push_type: invalidValue",
            "deeplink: invalidTemplate",
            "strings.title: invalidTemplate",
            "strings.body: missing",
            "locales.pl_PL: invalidTemplate",
            "locales.pl.body: wrongType",
        ])
    }

    /// A store whose one template is broken, as the CLI's folder reports it.
    struct BrokenStore: TemplateStore {
        func lookup(_ name: String) -> TemplateLookup {
            switch Template.parse(jsonBytes: Array(#"{"strings": {"title": "x"}}"#.utf8), name: name) {
            case .success(let t): return .found(t)
            case .failure(let r): return .invalid(r.problems)
            }
        }
        func names() -> [String] { ["t"] }
    }

    @Test func campaignShowsTheBrokenTemplatesProblems() {
        let planner = CampaignPlanner(bundleId: "com.example.shop", links: Fixtures.routes, templates: BrokenStore(), clock: SystemClock())
        guard case .failure(let r) = planner.plan(jsonBytes: Array(#"{"template": "t", "devices": ["\#(Fixtures.tokenA)"]}"#.utf8)) else {
            Issue.record("accepted a campaign with a broken template")
            return
        }
        #expect(r.problems.map(\.description) == [#"template: template "t" at strings.body: missing: the default body [invalidTemplate]"#])
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { return true } else { return false } }
    var isSuccess: Bool { !isFailure }
}

@Suite struct StreamedDeviceTests {
    /// Devices a sender streams from a file go through the same checks as listed ones.
    @Test func devicesOutsideTheFileGetTheirOwnLinkAndChecks() throws {
        let json = #"{"template": "price_drop", "variables": {"product_id": 7, "product_name": "Mug", "new_price": "$3"}}"#
        let plan = try Fixtures.planner(requireDevices: false).plan(jsonBytes: Array(json.utf8)).get()
        #expect(plan.link?.canonical == "https://example.com/product/7?ref=price-drop")
        let other = try #require(try? Device.parse(" <\(Fixtures.tokenB.uppercased())> ", variables: [NamedValue(name: "product_id", value: "8")]).get())
        let body = try JSONParser().parse(try plan.request(for: other, apnsID: APNsID.sequential(1)).body)
        #expect(body[path: "deeplink"] == .string("https://example.com/product/8?ref=price-drop"))
        let bad = Device(token: Fixtures.tokenA, variables: [NamedValue(name: "product_id", value: "x")])
        #expect(throws: PayloadError.self) { try plan.request(for: bad) }
        do {
            _ = try plan.request(for: bad)
        } catch {
            #expect(error.linkCode == .invalidParameter)
            #expect(error.path.description == "devices")
        }
    }

    @Test func constantTemplateLinkIsCheckedOnceAndItsRejectionPointsAtTheTemplate() throws {
        let wishlist = try Template.parse(jsonBytes: Array(#"{"deeplink": "https://example.com/profile?tab=wishlist", "strings": {"body": "Hi"}}"#.utf8), name: "w").get()
        let plan = try Fixtures.plan(#"{"template": "w", "devices": ["\#(Fixtures.tokenA)"]}"#, templates: TemplateLibrary([wishlist])).get()
        #expect(plan.link?.route == "profile")
        #expect(plan.link(for: Device(token: Fixtures.tokenB, variables: [NamedValue(name: "x", value: "y")]))?.canonical
            == "https://example.com/profile?tab=wishlist")

        let broken = try Template.parse(jsonBytes: Array(#"{"deeplink": "https://example.com/profile?tab=cart", "strings": {"body": "Hi"}}"#.utf8), name: "b").get()
        let problems = Fixtures.problems(#"{"template": "b", "devices": ["\#(Fixtures.tokenA)"]}"#, templates: TemplateLibrary([broken]))
        #expect(problems.map { "\($0.path): \($0.stableCode)" } == ["template: invalidParameter"])
    }

    @Test func campaignVariablesThatMakeABadLinkPointAtVariables() {
        let problems = Fixtures.problems(#"{"template": "price_drop", "variables": {"product_id": "-1", "product_name": "A", "new_price": "B"}, "devices": ["\#(Fixtures.tokenA)", "\#(Fixtures.tokenB)"]}"#)
        #expect(problems.map { "\($0.path): \($0.stableCode)" } == ["variables: invalidParameter"])
    }

    @Test func templateDefaultPushTypeSetsTheTopic() throws {
        let voip = try Template.parse(jsonBytes: Array(#"{"defaults": {"push_type": "voip"}, "strings": {"body": "Call from {{caller}}"}}"#.utf8), name: "call").get()
        let plan = try Fixtures.plan(#"{"template": "call", "variables": {"caller": "Ana"}, "devices": ["\#(Fixtures.tokenA)"]}"#,
                                     templates: TemplateLibrary([voip])).get()
        #expect(plan.topic == "com.example.shop.voip")
        #expect(plan.payloadLimit == 5120)
    }
}

@Suite struct SoundTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func criticalSoundIsChecked() {
        #expect(Fixtures.codes(#"{"alert": "x", "sound": {"critical": 1, "volume": 1.5}, \#(device)}"#)
            == ["sound.volume: invalidValue", "sound.name: missing"])
        #expect(Fixtures.codes(#"{"alert": "x", "sound": {"critical": 2, "name": "a", "loud": true}, \#(device)}"#)
            == ["sound.loud: unknownKey", "sound.critical: invalidValue"])
        #expect(Fixtures.codes(#"{"alert": "x", "sound": "", \#(device)}"#) == ["sound: invalidValue"])
    }

    @Test func alertAsAStringIsTheBody() throws {
        #expect(try Fixtures.firstBody(#"{"alert": "Hello", "sound": "default", \#(device)}"#)
            == #"{"aps":{"alert":{"body":"Hello"},"sound":"default"}}"#)
    }
}
