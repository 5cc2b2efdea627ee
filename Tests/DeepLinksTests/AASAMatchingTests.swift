import Testing
import DeepLinks

@Suite struct AASAMatchingTests {
    let app = "A1B2C3D4E5.com.example.shop"

    func doc(_ components: String, appIDs: String = "\"A1B2C3D4E5.com.example.shop\"") throws -> AASADocument {
        try AASAParser.parse(Array("{\"applinks\":{\"details\":[{\"appIDs\":[\(appIDs)],\"components\":[\(components)]}]}}".utf8))
    }

    func decide(_ d: AASADocument, _ path: String, query: String? = nil, fragment: String? = nil) -> String {
        switch d.decision(for: AASAURLParts(path: path, query: query, fragment: fragment), appID: app) {
        case .opens(let r): return "opens \(r.location.components.last.map { "\($0)" } ?? "")"
        case .excluded(let r): return "excluded \(r.location.components.last.map { "\($0)" } ?? "")"
        case .notMatched: return "no"
        }
    }

    @Test func firstMatchingRuleWins() throws {
        let d = try doc(#"{"/":"/help/private/*","exclude":true},{"/":"/help/*"}"#)
        #expect(decide(d, "/help/private/x") == "excluded index(0)")
        #expect(decide(d, "/help/x") == "opens index(1)")
        #expect(decide(d, "/other") == "no")
    }

    @Test func emptyComponentMatchesEverything() throws {
        let d = try doc("{}")
        #expect(decide(d, "/", query: "a=1", fragment: "f") == "opens index(0)")
    }

    @Test func queryDictionaryNeedsEveryNamedItem() throws {
        let d = try doc(#"{"/":"/p","?":{"ref":"?*","v":"1"}}"#)
        #expect(decide(d, "/p", query: "v=1&ref=abc&other=z") == "opens index(0)")
        #expect(decide(d, "/p", query: "ref=abc") == "no")          // v missing
        #expect(decide(d, "/p", query: "ref=&v=1") == "no")          // ?* needs a character
        #expect(decide(d, "/p", query: "ref=abc&v=2") == "no")
        #expect(decide(d, "/p") == "no")
    }

    @Test func queryStringPatternSeesTheWholeQuery() throws {
        let d = try doc(#"{"/":"/p","?":"a=*"}"#)
        #expect(decide(d, "/p", query: "a=1&b=2") == "opens index(0)")
        #expect(decide(d, "/p", query: "b=2&a=1") == "no")
        #expect(decide(d, "/p") == "no")  // absent query is ""
    }

    @Test func fragmentPattern() throws {
        let d = try doc(##"{"#":"no_universal_links","exclude":true},{"/":"*"}"##)
        #expect(decide(d, "/x", fragment: "no_universal_links") == "excluded index(0)")
        #expect(decide(d, "/x") == "opens index(1)")
    }

    @Test func caseSensitivity() throws {
        let d = try doc(#"{"/":"/Help/*","caseSensitive":false}"#)
        #expect(decide(d, "/HELP/x") == "opens index(0)")
        let strict = try doc(#"{"/":"/Help/*"}"#)
        #expect(decide(strict, "/HELP/x") == "no")
    }

    @Test func percentEncodedFalseComparesDecodedText() throws {
        let decoded = try doc(#"{"/":"/a b/żółw","percentEncoded":false}"#)
        #expect(decide(decoded, "/a%20b/%C5%BC%C3%B3%C5%82w") == "opens index(0)")
        let encoded = try doc(#"{"/":"/a%20b"}"#)
        #expect(decide(encoded, "/a%20b") == "opens index(0)")
        #expect(decide(encoded, "/a b") == "no")
    }

    @Test func percentEncodedFalseDecodesQueryItemNamesAndValues() throws {
        let d = try doc(#"{"?": {"a b": "ż*"}, "percentEncoded": false}"#)
        #expect(decide(d, "/", query: "a%20b=%C5%BCx") == "opens index(0)")
        #expect(decide(d, "/", query: "a+b=%C5%BCx") == "no")  // + is not a space
    }

    @Test func entriesForOtherAppsAreSkipped() throws {
        let d = try doc(#"{"/":"*"}"#, appIDs: "\"OTHER.app\"")
        #expect(decide(d, "/x") == "no")
        #expect(!d.lists(appID: app))
    }

    @Test func legacyPathsMatchThePathOnly() throws {
        let d = try AASAParser.parse(Array("""
        {"applinks":{"apps":[],"details":[{"appID":"A1B2C3D4E5.com.example.shop","paths":["NOT /help/private*","/help/*"]}]}}
        """.utf8))
        #expect(decide(d, "/help/private/x", query: "q=1") == "excluded index(0)")
        #expect(decide(d, "/help/x", query: "q=1") == "opens index(1)")
    }
}
