import Payloads
import StrictJSON
import Testing
@testable import Gateway

/// The preview and template answers match their OpenAPI schemas exactly: every required
/// member present, nothing undocumented, each value of its declared type.
@Suite struct PreviewAnswerSchemaTests {
    static let document = (try? JSONParser().parse(OpenAPIDocument.text).objectValue) ?? JSONObject()

    @Test(arguments: ["order-ready", "price-drop", "abandoned-cart", "inline-alert"])
    func previewOfEachShippedCampaignMatchesTheSchema(_ name: String) throws {
        let gateway = try LiveGateway()
        let body = String(decoding: try Fixtures.bytes("config/campaigns/\(name).json"), as: UTF8.self)
        let response = try #require(gateway.request("POST", "/v1/notifications/preview", json: body))
        #expect(response.status == 200)
        let answer = try JSONParser().parse(response.body)
        let problems = SchemaCheck(document: Self.document).problems(answer, against: .object(JSONObject([JSONMember(key: "$ref", value: .string("#/components/schemas/Preview"))])), at: "")
        #expect(problems == [])
    }

    @Test func templatesListTheShippedTemplatesWithTheirVariables() throws {
        let gateway = try LiveGateway()
        let response = try #require(gateway.request("GET", "/v1/templates"))
        #expect(response.status == 200)
        let answer = try JSONParser().parse(response.body)
        let problems = SchemaCheck(document: Self.document).problems(answer, against: .object(JSONObject([JSONMember(key: "$ref", value: .string("#/components/schemas/TemplateList"))])), at: "")
        #expect(problems == [])
        let templates = answer.objectValue?["templates"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(templates.map { $0["name"]?.stringValue ?? "" } == ["abandoned_cart", "order_ready", "price_drop"])
        let order = try #require(templates.first { $0["name"] == .string("order_ready") })
        #expect(order["locales"] == .array([.string("pl"), .string("pl-PL")]))
        #expect(order["deeplink"] == .string("https://example.com/order/{{order_id}}"))
        let variables = order["variables"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(variables.map { $0["name"]?.stringValue ?? "" } == ["store_name", "order_id"])
        #expect(variables.allSatisfy { ($0["description"]?.stringValue ?? "").count > 10 })
    }

    @Test func theCheckerCatchesAnUndocumentedMember() {
        let schema = JSON.object(JSONObject([JSONMember(key: "$ref", value: .string("#/components/schemas/PreviewWarning"))]))
        let extra = JSON.object(JSONObject([JSONMember(key: "code", value: .string("cutOnScreen")), JSONMember(key: "field", value: .null),
                                            JSONMember(key: "message", value: .string("m")), JSONMember(key: "x", value: .bool(true))]))
        #expect(SchemaCheck(document: Self.document).problems(extra, against: schema, at: "") == ["/x: not in the schema"])
    }
}

/// The subset of JSON Schema the OpenAPI document uses: $ref, type (one or a list),
/// const, enum, oneOf, required, properties, additionalProperties, items, minimum,
/// maximum, maxItems.
struct SchemaCheck {
    let document: JSONObject

    func problems(_ value: JSON, against schema: JSON, at path: String) -> [String] {
        guard let s = schema.objectValue else { return [] }
        if let ref = s["$ref"]?.stringValue {
            var node: JSON = .object(document)
            for part in ref.dropFirst(2).split(separator: "/") { node = node.objectValue?[String(part)] ?? .null }
            guard node != .null else { return ["\(path): unresolved \(ref)"] }
            return problems(value, against: node, at: path)
        }
        if let branches = s["oneOf"]?.arrayValue {
            let matching = branches.filter { problems(value, against: $0, at: path).isEmpty }
            return matching.count == 1 ? [] : ["\(path): matches \(matching.count) of \(branches.count) oneOf branches"]
        }
        var out: [String] = []
        if let c = s["const"], c != value { out.append("\(path): expected \(JSONWriter.serialize(c))") }
        if let e = s["enum"]?.arrayValue, !e.contains(value) { out.append("\(path): \(JSONWriter.serialize(value)) not in enum") }
        if let t = s["type"] {
            let types = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            if !types.contains(where: { Self.isOfType(value, $0) }) { out.append("\(path): not of type \(types)") }
        }
        if case .number = value, let n = value.doubleValue {
            if let min = s["minimum"]?.doubleValue, n < min { out.append("\(path): below \(min)") }
            if let max = s["maximum"]?.doubleValue, n > max { out.append("\(path): above \(max)") }
        }
        if let items = value.arrayValue {
            if let max = s["maxItems"]?.int64Value, items.count > max { out.append("\(path): more than \(max) items") }
            if let itemSchema = s["items"] {
                for (i, item) in items.enumerated() { out += problems(item, against: itemSchema, at: "\(path)/\(i)") }
            }
        }
        if let object = value.objectValue {
            let properties = s["properties"]?.objectValue ?? JSONObject()
            for key in s["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[key] == nil {
                out.append("\(path)/\(key): required but missing")
            }
            for member in object.members {
                if let p = properties[member.key] {
                    out += problems(member.value, against: p, at: "\(path)/\(member.key)")
                } else if let extra = s["additionalProperties"] {
                    if extra == .bool(false) { out.append("\(path)/\(member.key): not in the schema") } else {
                        out += problems(member.value, against: extra, at: "\(path)/\(member.key)")
                    }
                }
            }
        }
        return out
    }

    static func isOfType(_ value: JSON, _ type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null): return true
        case ("integer", .number): return value.int64Value != nil
        case ("number", .number): return true
        default: return false
        }
    }
}
