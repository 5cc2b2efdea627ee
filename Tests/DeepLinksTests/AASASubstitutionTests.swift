import Testing
import DeepLinks

extension AASADecision {
    var opensApp: Bool {
        if case .opens = self { return true }
        return false
    }
}

@Suite struct AASASubstitutionTests {
    let app = "A1B2C3D4E5.com.example.shop"

    func parse(variables: String = "{}", _ components: String) throws(AASAError) -> AASADocument {
        try AASAParser.parse(Array("""
        {"applinks": {"substitutionVariables": \(variables), "details": [{"appIDs": ["\(app)"], "components": [\(components)]}]}}
        """.utf8))
    }

    func error(variables: String = "{}", _ components: String) -> AASAError? {
        do { _ = try parse(variables: variables, components); return nil } catch { return error }
    }

    func opens(_ d: AASADocument, _ path: String, query: String? = nil) -> Bool {
        d.decision(for: AASAURLParts(path: path, query: query), appID: app).opensApp
    }

    @Test func customVariableValuesMayHoldWildcards() throws {
        let d = try parse(variables: #"{"cat": ["shoes", "hats*"]}"#, #"{"/": "/$(cat)/?*"}"#)
        #expect(opens(d, "/shoes/1"))
        #expect(opens(d, "/hats-big/1"))
        #expect(!opens(d, "/socks/1"))
        #expect(d.details[0].rules[0].path?.alternatives == ["/shoes/?*", "/hats*/?*"])
    }

    @Test func predefinedCharacterClasses() throws {
        let d = try parse(#"{"/": "/p/$(digit)$(digit)"}, {"/": "/h/$(xdigit)", "?": {"c": "$(upper)"}}"#)
        #expect(opens(d, "/p/12"))
        #expect(!opens(d, "/p/1a"))
        #expect(opens(d, "/h/f", query: "c=Q"))
        #expect(!opens(d, "/h/g", query: "c=Q"))
        #expect(!opens(d, "/h/f", query: "c=q"))
    }

    @Test func customNamesShadowPredefinedOnes() throws {
        let d = try parse(variables: #"{"digit": ["one"]}"#, #"{"/": "/$(digit)"}"#)
        #expect(opens(d, "/one"))
        #expect(!opens(d, "/1"))
    }

    @Test func unterminatedReferenceIsLiteral() throws {
        let d = try parse(#"{"/": "/a$(b"}"#)
        #expect(opens(d, "/a$(b"))
    }

    @Test func errorsSayWhere() {
        let unknown = error(#"{"/": "/$(nope)"}"#)
        #expect(unknown?.code == .unknownVariable)
        #expect(unknown?.path.description == "applinks.details[0].components[0][\"/\"]")
        let region = error(##"{"#": "$(region)"}"##)
        #expect(region?.code == .unsupported)
        let nested = error(variables: #"{"a": ["x", "$(digit)"]}"#, "{}")
        #expect(nested?.code == .invalidVariable)
        #expect(nested?.path.description == "applinks.substitutionVariables.a[1]")
        let badName = error(variables: #"{"a(b": ["x"]}"#, "{}")
        #expect(badName?.code == .invalidVariable)
        let tooMany = error(#"{"/": "/$(alnum)$(alnum)$(alnum)"}"#)
        #expect(tooMany?.code == .unsupported)
        #expect(tooMany?.message == "pattern expands to 238328 plain patterns; the limit is 4096")
    }

    @Test func validatorProbesEveryAlternative() throws {
        let table = try AASATestTables.shop()
        let d = try parse(variables: #"{"r": ["product", "junk"]}"#, #"{"/": "/$(r)/?*/*", "exclude": true}, {"/": "/$(r)/?*"}"#)
        let findings = AASAValidator(table: table).validate(d).filter { $0.code == .unroutedPattern }
        #expect(findings.map(\.example) == ["/junk/x"])
    }
}
