import Testing
@testable import StrictJSON

@Suite struct JSONParserTests {
    let parser = JSONParser()

    @Test func keepsMemberOrderAndNumberText() throws {
        let json = try parser.parse(#"{"b": 1.50, "a": [true, null, "x"], "c": -0}"#)
        let object = try #require(json.objectValue)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == .number("1.50"))
        #expect(object["c"] == .number("-0"))
        #expect(object["a"] == .array([.bool(true), .null, .string("x")]))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let json = try parser.parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#)
        #expect(json == .string("a\"\\/\u{8}\u{C}\n\r\té😀"))
    }

    @Test(arguments: [
        ("{\"a\":1,\"a\":2}", JSONParseError.Code.duplicateKey),
        ("[1,]", .invalidJSON),
        ("{\"a\":1,}", .invalidJSON),
        ("01", .invalidJSON),
        ("1.", .invalidJSON),
        ("-", .invalidJSON),
        ("tru", .invalidJSON),
        ("\"abc", .invalidJSON),
        ("\"a\u{1}b\"", .invalidJSON),
        ("\"\\x\"", .invalidJSON),
        ("\"\\ud800\"", .invalidUTF8),
        ("\"\\udc00\"", .invalidUTF8),
        ("// comment\n1", .invalidJSON),
        ("", .invalidJSON),
        ("1 2", .invalidJSON),
        ("\u{FEFF}{}", .invalidJSON),
    ])
    func rejects(_ text: String, _ code: JSONParseError.Code) {
        #expect(throws: JSONParseError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            #expect(error.code == code, "\(text.debugDescription): \(error)")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0xC0, 0xAF, 0x22],        // overlong '/'
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xE2, 0x82, 0x22],        // truncated
            [0x22, 0xFF, 0x22],
        ]
        for bytes in cases {
            do {
                _ = try parser.parse(bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .invalidUTF8)
            }
        }
    }

    @Test func namesABadEscapeByteWithoutEchoingIt() {
        for (bytes, expected) in [([0x22, 0x5C, 0x1B, 0x22], "invalid escape '\\' followed by byte 0x1B"),
                                  ([0x22, 0x5C, 0xC3, 0xA9, 0x22], "invalid escape '\\' followed by byte 0xC3"),
                                  ([0x22, 0x5C, 0x71, 0x22], "invalid escape '\\q'")] as [([UInt8], String)] {
            do {
                _ = try parser.parse(bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .invalidJSON)
                #expect(error.message == expected)
            }
        }
    }

    @Test func reportsLineColumnAndPath() {
        do {
            _ = try parser.parse("{\n  \"devices\": [\"ab\",\n  \"cd\" \"ef\"]\n}")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 8)
            #expect(error.path.description == "devices")
            #expect(error.path.pointer == "/devices")
        }
    }

    @Test func limitsDepth() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try parser.parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parser.parse(ok) }
    }

    @Test func limitsSize() {
        let small = JSONParser(maxDepth: 8, maxBytes: 4)
        do {
            _ = try small.parse("[1,2]")
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }
}

@Suite struct JSONWriterTests {
    @Test func escapesUnsafeCharacters() throws {
        let input = "a\"b\\c\u{0}\u{1F}\u{7F}\u{85}\u{2028}\u{2029}\u{202E}\u{2066}\u{200B}\u{FEFF}\u{E0041}é😀"
        let quoted = JSONWriter.quoted(input)
        #expect(quoted == #""a\"b\\c\u0000\u001f\u007f\u0085\u2028\u2029\u202e\u2066\u200b\ufeff\udb40\udc41é😀""#)
        // And it parses back to the same text.
        #expect(try JSONParser().parse(quoted) == .string(input))
    }

    @Test func writesValuesInOrder() throws {
        let text = #"{"z":[1,2.5e3,true,null],"a":{"k":"v"}}"#
        let json = try JSONParser().parse(text)
        #expect(JSONWriter.serialize(json) == text)
    }

    @Test func displayEscaping() {
        #expect(TextSafety.escapedForDisplay("java\tscript:\u{202E}") == "java\\u0009script:\\u202e")
    }

    @Test func pathRendering() {
        let path = JSONPath.root.appending("data").appending("a.b").appending(index: 3).appending("x/y~")
        #expect(path.description == #"data["a.b"][3].x/y~"# || path.description == #"data["a.b"][3]["x/y~"]"#)
        #expect(path.pointer == "/data/a.b/3/x~1y~0")
    }
}
