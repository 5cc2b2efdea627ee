import Testing
import DeepLinks

@Suite struct AASAValidatorTests {
    typealias T = AASATestTables

    func findings(_ components: String, appIDs: String = "\"A1B2C3D4E5.com.example.shop\"") throws -> [AASAFinding] {
        let text = "{\"applinks\":{\"details\":[{\"appIDs\":[\(appIDs)],\"components\":[\(components)]}]}}"
        return AASAValidator(table: try T.shop()).validate(try AASAParser.parse(Array(text.utf8)))
    }

    let complete = #"""
    {"/":"/product/*/*","exclude":true},{"/":"/product/?*"},{"/":"/order/*/*","exclude":true},{"/":"/order/?*"},
    {"/":"/profile"},{"/":"/help/?*"}
    """#

    @Test func consistentFileHasNoFindings() throws {
        #expect(try findings(complete).isEmpty)
    }

    @Test func routeNotOpened() throws {
        let f = try findings(#"{"/":"/product/?*"},{"/":"/order/?*"},{"/":"/profile"}"#)
        let missing = f.filter { $0.code == .routeNotOpened }
        #expect(missing.map(\.route) == ["help"])
        #expect(missing.first?.example == "/help/x")
    }

    @Test func routeExcluded() throws {
        let f = try findings(#"{"/":"/product/*","exclude":true},"# + complete)
        let excluded = f.filter { $0.code == .routeExcluded }
        #expect(excluded.map(\.route) == ["product"])
        #expect(excluded.first?.location?.description == "applinks.details[0].components[0]")
    }

    @Test func unguardedStarOpensPathsNoRouteHandles() throws {
        let f = try findings(#"{"/":"/product/*"},{"/":"/order/?*"},{"/":"/profile"},{"/":"/help/*"}"#)
        #expect(f.map(\.code) == [.unroutedPattern, .unroutedPattern, .unroutedPattern])
        #expect(f.map(\.example) == ["/product/", "/order/xx/y", "/help/"])
        #expect(f[0].location?.description == "applinks.details[0].components[0]")
    }

    @Test func catchAllIsReported() throws {
        let f = try findings(complete + #",{"/":"*"}"#)
        #expect(f.map(\.code) == [.unroutedPattern])
        #expect(f.first?.example == "/")
    }

    @Test func legacyPathsAreChecked() throws {
        let text = """
        {"applinks":{"apps":[],"details":[{"appID":"A1B2C3D4E5.com.example.shop","paths":["/product/*","NOT /help/*","/help/*","/profile"]}]}}
        """
        let f = AASAValidator(table: try T.shop()).validate(try AASAParser.parse(Array(text.utf8)))
        #expect(f.map(\.code) == [.routeNotOpened, .routeExcluded, .unroutedPattern])
        #expect(f.map(\.route) == ["order", "help", nil])
    }

    @Test func foreignAndMissingAppIDs() throws {
        let foreign = try findings(complete, appIDs: "\"A1B2C3D4E5.com.example.shop\",\"ZZZ.other\"")
        #expect(foreign.map(\.code) == [.foreignAppID])
        #expect(foreign.first?.location?.description == "applinks.details[0].appIDs[1]")
        let missing = try findings(complete, appIDs: "\"A1B2C3D4E5.com.example.shop.dev\"")
        #expect(missing.map(\.code) == [.foreignAppID, .appNotListed])
    }

    @Test func ignoredKeysAreFindings() throws {
        let f = try findings(complete + #",{"/":"/news/*","exclude":true,"commentt":"typo"}"#)
        #expect(f.map(\.code) == [.ignoredKey])
        #expect(f.first?.location?.description == "applinks.details[0].components[6].commentt")
    }

    @Test func queryRequirementsAreSatisfiedBySamples() throws {
        let table = try T.table(#"{"name": "search", "path": "/search", "query": {"q": {"type": "string", "required": true}}}"#)
        let text = #"{"applinks":{"details":[{"appIDs":["A1B2C3D4E5.com.example.shop"],"components":[{"/":"/search","?":{"q":"?*"}}]}]}}"#
        let f = AASAValidator(table: table).validate(try AASAParser.parse(Array(text.utf8)))
        #expect(f.isEmpty)
    }
}
