import Foundation
import Payloads
import StrictJSON
import Testing

/// What the preview says beyond the bytes: where each text came from, how an iPhone
/// would lay it out, and warnings in words.
@Suite struct NotificationDisplayTests {
    @Test func shortTextsTakeOneLine() {
        let title = NotificationDisplay.layout("Price drop", as: .title)
        #expect(title.lines == ["Price drop"])
        #expect(!title.truncated)
    }

    @Test func aLongBodyIsCutAfterFourLinesWithAnEllipsis() {
        let text = String(repeating: "Pick it up at the store any time today. ", count: 6)
        let body = NotificationDisplay.layout(text, as: .body)
        #expect(body.lines.count == 4)
        #expect(body.totalLines > 4)
        #expect(body.truncated)
        #expect(body.lines.last?.hasSuffix("…") == true)
        // Every visible line is a prefix of what is left of the text (no character invented).
        var rest = Substring(text)
        for line in body.lines.dropLast() {
            #expect(rest.hasPrefix(line))
            rest = rest.dropFirst(line.count).drop { $0 == " " }
        }
    }

    @Test func aLongTitleIsCutOnItsOneLine() {
        let title = NotificationDisplay.layout("Your order from the spring collection is ready for pick-up", as: .title)
        #expect(title.lines.count == 1)
        #expect(title.truncated)
        #expect(title.lines[0].hasSuffix("…"))
    }

    @Test func lineBreaksAndLineSeparatorsStartNewLines() {
        #expect(NotificationDisplay.layout("one\ntwo\u{2028}three\u{2029}four", as: .body).lines == ["one", "two", "three", "four"])
        #expect(NotificationDisplay.layout("a\r\nb", as: .body).lines == ["a", "b"])
    }

    @Test func aWordWiderThanTheLineBreaksInside() {
        let layout = NotificationDisplay.layout(String(repeating: "x", count: 80), as: .body)
        #expect(layout.lines.count == 3)
        #expect(layout.lines.joined() == String(repeating: "x", count: 80))
    }

    @Test func invisibleCharactersTakeNoWidthAndWideOnesMore() {
        let plain = NotificationDisplay.layout(String(repeating: "abc ", count: 17), as: .body)
        let withBidi = NotificationDisplay.layout(String(repeating: "a\u{202E}bc ", count: 17), as: .body)
        #expect(plain.totalLines == withBidi.totalLines)
        #expect(NotificationDisplay.layout(String(repeating: "漢", count: 40), as: .body).totalLines
                > NotificationDisplay.layout(String(repeating: "a", count: 40), as: .body).totalLines)
    }
}

@Suite struct TemplateVariablesTests {
    @Test func shippedTemplatesDescribeEveryPlaceholder() throws {
        for name in ["order_ready", "price_drop", "abandoned_cart"] {
            let template = try Fixtures.template(name)
            #expect(!template.variables.isEmpty)
            for v in template.variables { #expect(v.description?.isEmpty == false, "\(name): \(v.name) has no description") }
            #expect(template.defaultLocale == "en")
        }
        #expect(try Fixtures.template("order_ready").variables.map(\.name) == ["store_name", "order_id"])
    }

    @Test func aDescriptionOfAnUnusedVariableIsAnError() {
        let text = #"{"variables": {"order_id": "the order", "ghost": "nothing uses it", "bad name": "x"}, "strings": {"body": "Order {{order_id}}"}}"#
        guard case .failure(let r) = Template.parse(jsonBytes: Array(text.utf8), name: "t") else {
            Issue.record("accepted a template describing an unused variable")
            return
        }
        #expect(r.problems.map { "\($0.path): \($0.code.rawValue)" } == [#"variables["bad name"]: invalidTemplate"#, "variables.ghost: invalidTemplate"])
    }

    @Test func sourcesNameTheVariantEachTextCameFrom() throws {
        let template = try Fixtures.template("order_ready")
        let plPL = template.resolved(for: "pl-pl").sources
        #expect(plPL == Template.Sources(title: "pl", subtitle: "pl-PL", body: "pl"))
        #expect(template.resolved(for: "de").sources == Template.Sources(title: nil, subtitle: nil, body: nil))
        #expect(template.defaultStringsServe("en-GB"))
        #expect(!template.defaultStringsServe("de"))
    }
}

@Suite struct PreviewExplainsTests {
    static func preview(_ json: String) throws -> JSONObject {
        let plan = try Fixtures.plan(json).get()
        let bytes = try CampaignPreview(plan: plan) { APNsID.sequential($0 + 1) }.json
        let root = try #require(try JSONParser().parse(bytes).objectValue)
        return try #require(root["requests"]?.arrayValue?.first?.objectValue)
    }

    @Test func aMissingTranslationIsAWarningNamingTheLocale() throws {
        let entry = try Self.preview(#"{"template": "order_ready", "locale": "de", "variables": {"order_id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "store_name": "Rynek"}, "devices": ["\#(Fixtures.tokenA)"]}"#)
        let alert = try #require(entry["alert"]?.objectValue)
        #expect(alert["locale"] == .string("de"))
        #expect(alert["title"]?.objectValue?["source"] == .string("en"))
        #expect(alert["subtitle"] == .null)
        let warnings = entry["warnings"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(warnings.map { $0["code"]?.stringValue ?? "" } == ["missingTranslation", "missingTranslation"])
        #expect(warnings.map { $0["field"]?.stringValue ?? "" } == ["title", "body"])
        #expect(warnings.first?["message"]?.stringValue?.contains(#"no "de" translation"#) == true)
    }

    @Test func theDefaultLanguageIsNotAMissingTranslation() throws {
        let entry = try Self.preview(#"{"template": "price_drop", "locale": "en-US", "variables": {"product_id": "1", "product_name": "Shoe", "new_price": "$1"}, "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(entry["warnings"]?.arrayValue == [])
    }

    @Test func textCutOnScreenAndTheLinkAndTheSimulatorFile() throws {
        let body = String(repeating: "A long message about the sale. ", count: 8)
        let entry = try Self.preview(#"{"alert": {"title": "Sale", "body": "\#(body)"}, "deeplink": "shop://product/42?ref=x", "devices": ["\#(Fixtures.tokenA)"]}"#)
        let text = try #require(entry["alert"]?.objectValue?["body"]?.objectValue)
        #expect(text["source"] == .string("campaign"))
        #expect(text["cut"] == .bool(true))
        #expect(text["lines"]?.arrayValue?.count == 4)
        #expect(entry["warnings"]?.arrayValue?.first?.objectValue?["code"] == .string("cutOnScreen"))
        let link = try #require(entry["link"]?.objectValue)
        #expect(link["canonical"] == .string("https://example.com/product/42?ref=x"))
        #expect(link["route"] == .string("product"))
        #expect(link["params"]?.objectValue?["id"] == .string("42"))
        let file = try #require(entry["simulator"]?.objectValue)
        #expect(file["file_name"] == .string("device-1-\(Fixtures.tokenA.prefix(8))-default.apns"))
        let contents = try #require(file["contents"]?.stringValue)
        #expect(contents.hasPrefix(#"{"Simulator Target Bundle":"com.example.shop","aps":"#))
        // The file is the sent body with the target bundle first.
        let sent = JSONWriter.serialize(try #require(entry["body"]))
        #expect(contents == "{\"Simulator Target Bundle\":\"com.example.shop\"," + sent.dropFirst() + "\n")
    }

    @Test func theSimulatorFileIsNullForPushTypesItDoesNotTake() throws {
        let entry = try Self.preview(#"{"push_type": "voip", "data": {"call": "1"}, "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(entry["simulator"] == .null)
        #expect(entry["alert"] == .null)
        #expect(entry["link"] == .null)
    }
}
