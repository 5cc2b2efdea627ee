import Testing
import StrictJSON

/// The one reader on documents that are not the configuration: a route table or template
/// in a file, a campaign or request body by pointer alone; read as written.
@Suite struct ConfigReaderDocumentTests {
    func parse(_ text: String) throws -> JSON { try JSONParser().parse(Array(text.utf8)) }

    @Test func aBodyIsLocatedByPointerAndEveryProblemIsKept() throws {
        var r = ConfigReader(document: nil)
        let json = try parse(#"{"name": 7, "tags": ["a", 1, "a", null], "colour": "red", "flags": {"on": "yes"}}"#)
        guard let object = r.object(json, at: .root, required: ["name", "id"], optional: ["tags", "flags"]) else {
            Issue.record("an object was refused")
            return
        }
        #expect(r.string(object, "name", at: .root) == nil)
        #expect(r.strings(object, "tags", at: .root, distinct: "tag") == nil)
        let flags = r.object(object, "flags", at: .root)
        #expect(flags.flatMap { $0["on"] }.flatMap { r.bool($0, at: JSONPath.root.appending("flags").appending("on")) } == nil)
        #expect(r.diagnostics.map(\.description) == [
            #"colour: unknown key "colour"; expected one of: name, id, tags, flags [unknownKey]"#,
            #"$: missing key "id" [missing]"#,
            "name: expected a string, found a number [wrongType]",
            "tags[1]: expected a string, found a number [wrongType]",
            #"tags[2]: duplicate tag "a" [invalidValue]"#,
            "tags[3]: expected a string, found null [wrongType]",
            #"flags.on: expected true or false, found a string [wrongType]"#,
        ])
        #expect(r.diagnostics.allSatisfy { if case .pointer = $0.location { true } else { false } })
    }

    @Test func aDocumentInAFileIsLocatedInTheFileAndNeverReadsTheEnvironment() throws {
        var r = ConfigReader(document: "t.json")
        let object = try #require(try parse(#"{"listen": 1}"#).objectValue)
        #expect(r.string(object, "listen", at: .root) == nil)
        #expect(r.diagnostics == [Diagnostic(.wrongType, at: .file("t.json", at: JSONPath.root.appending("listen")),
                                             "expected a string, found a number")])
        #expect(r.entries.isEmpty, "nothing is recorded for config print")
        #expect(r.consulted.isEmpty, "no variable is looked for")
        #expect(r.string(object, "absent", at: .root, default: "x")?.value == "x")
        #expect(r.entries.isEmpty)
    }

    @Test func theConfigurationStillTakesOverridesAndRecordsThem() throws {
        var r = ConfigReader(file: "config/gateway.json", environment: ["PUSHGATE_SERVER_LISTEN": "127.0.0.1:9"])
        let server = r.section(try parse(#"{"listen": "0.0.0.0:80"}"#), at: JSONPath.root.appending("server"), keys: ["listen"])
        let listen = r.string(server, "listen", at: JSONPath.root.appending("server"))
        #expect(listen?.value == "127.0.0.1:9")
        #expect(listen?.origin == .environment("PUSHGATE_SERVER_LISTEN"))
        #expect(r.entries.count == 1)
    }
}
