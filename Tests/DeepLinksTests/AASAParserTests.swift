import Testing
import DeepLinks
import StrictJSON

@Suite struct AASAParserTests {
    func parse(_ text: String) throws(AASAError) -> AASADocument {
        try AASAParser.parse(Array(text.utf8))
    }

    func error(_ text: String) -> AASAError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    @Test func componentsFormWithAllKeys() throws {
        let doc = try parse("""
        {"applinks":{"details":[{"appIDs":["T.a","T.b"],"components":[
          {"/":"/p/*","?":{"ref":"?*"},"#":"top","exclude":true,"comment":"c","caseSensitive":false,"percentEncoded":false},
          {"?":"a=*"}
        ]}]},"webcredentials":{"apps":["T.a"]}}
        """)
        #expect(doc.details.count == 1)
        #expect(doc.details[0].appIDs == ["T.a", "T.b"])
        let first = doc.details[0].rules[0]
        #expect(first.path == AASAPattern("/p/*"))
        #expect(first.query == .items([(name: "ref", pattern: AASAPattern("?*"))]))
        #expect(first.fragment == AASAPattern("top"))
        #expect(first.exclude && !first.caseSensitive && !first.percentEncoded)
        #expect(first.comment == "c")
        #expect(first.location.description == "applinks.details[0].components[0]")
        let second = doc.details[0].rules[1]
        #expect(second.path == nil && second.query == .whole(AASAPattern("a=*")))
        #expect(!second.exclude && second.caseSensitive && second.percentEncoded)
        #expect(doc.ignored.isEmpty)
    }

    @Test func legacyPathsWithNOTAndSingleAppID() throws {
        let doc = try parse("""
        {"applinks":{"apps":[],"details":[{"appID":"T.a","paths":["NOT /help/private/*","/help/*"]}]}}
        """)
        let rules = doc.details[0].rules
        #expect(doc.details[0].appIDs == ["T.a"])
        #expect(rules.map(\.exclude) == [true, false])
        #expect(rules.map { $0.path?.text } == ["/help/private/*", "/help/*"])
        #expect(rules[0].location.description == "applinks.details[0].paths[0]")
    }

    @Test func defaultsAreInheritedAndOverridden() throws {
        let doc = try parse("""
        {"applinks":{"defaults":{"caseSensitive":false},"details":[
          {"appIDs":["T.a"],"defaults":{"percentEncoded":false},"components":[{"/":"/a"},{"/":"/b","caseSensitive":true}]},
          {"appIDs":["T.b"],"components":[{"/":"/c"}]}
        ]}}
        """)
        let a = doc.details[0].rules, b = doc.details[1].rules
        #expect(!a[0].caseSensitive && !a[0].percentEncoded)
        #expect(a[1].caseSensitive && !a[1].percentEncoded)
        #expect(!b[0].caseSensitive && b[0].percentEncoded)
    }

    @Test func whatAppleIgnoresIsReported() throws {
        let doc = try parse("""
        {"applinks":{"details":[{"appIDs":["T.a"],"appID":"T.a","components":[{"/":"/news/*","exclude":true,"commentt":"typo"}],
          "paths":["*"]}]},"extra":1}
        """)
        let where_ = doc.ignored.map(\.location.description)
        #expect(where_.contains("extra"))
        #expect(where_.contains("applinks.details[0].appID"))
        #expect(where_.contains("applinks.details[0].components[0].commentt"))
        #expect(where_.contains("applinks.details[0].paths"))
        #expect(doc.details[0].rules.count == 1)  // components win over paths
    }

    @Test(arguments: [
        ("{", AASAError.Code.invalidJSON, "$"),
        ("[]", .wrongType, "$"),
        ("{\"webcredentials\":{}}", .missingKey, "$"),
        ("{\"applinks\":[]}", .wrongType, "applinks"),
        ("{\"applinks\":{}}", .missingKey, "applinks"),
        ("{\"applinks\":{\"details\":{}}}", .wrongType, "applinks.details"),
        ("{\"applinks\":{\"details\":[{\"components\":[]}]}}", .missingKey, "applinks.details[0]"),
        ("{\"applinks\":{\"details\":[{\"appIDs\":[\"a\",1]}]}}", .wrongType, "applinks.details[0].appIDs[1]"),
        ("{\"applinks\":{\"details\":[{\"appIDs\":[],\"components\":[{\"/\":5}]}]}}", .wrongType,
         "applinks.details[0].components[0][\"/\"]"),
        ("{\"applinks\":{\"details\":[{\"appIDs\":[],\"components\":[{\"?\":[\"a\"]}]}]}}", .wrongType,
         "applinks.details[0].components[0][\"?\"]"),
        ("{\"applinks\":{\"details\":[{\"appIDs\":[],\"components\":[{\"exclude\":\"yes\"}]}]}}", .wrongType,
         "applinks.details[0].components[0].exclude"),
        ("{\"applinks\":{\"details\":[],\"substitutionVariables\":[]}}", .wrongType, "applinks.substitutionVariables"),
        ("{\"applinks\":{\"details\":[{\"appID\":\"a\",\"paths\":[true]}]}}", .wrongType, "applinks.details[0].paths[0]"),
    ])
    func unreadableFilesSayWhere(text: String, code: AASAError.Code, path: String) {
        let e = error(text)
        #expect(e?.code == code)
        #expect(e?.path.description == path)
    }

    @Test func overlongPatternsAreRefused() {
        let long = String(repeating: "*a", count: 513)
        let component = error("{\"applinks\":{\"details\":[{\"appIDs\":[],\"components\":[{\"#\":\"\(long)\"}]}]}}")
        #expect(component?.code == .unsupported)
        #expect(component?.message == "pattern is 1026 characters; patterns over 1024 are not evaluated")
        let legacy = error("{\"applinks\":{\"details\":[{\"appID\":\"a\",\"paths\":[\"/\(long)\"]}]}}")
        #expect(legacy?.path.description == "applinks.details[0].paths[0]")
    }

    @Test func wrongTypeMessageSaysWhatWasExpected() {
        let e = error("{\"applinks\":{\"details\":[{\"appIDs\":[],\"components\":[{\"exclude\":\"yes\"}]}]}}")
        #expect(e?.message == "expected true or false (exclude), found a string")
    }
}
