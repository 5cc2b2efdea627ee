import Testing
import DeepLinks
import StrictJSON

@Suite struct AASAGeneratorTests {
    typealias S = AASATestShapes

    func components(_ json: JSON) -> [JSON] {
        json.objectValue?["applinks"]?.objectValue?["details"]?.arrayValue?.first?.objectValue?["components"]?.arrayValue ?? []
    }

    func summary(_ json: JSON) -> [String] {
        components(json).map { c in
            let o = c.objectValue ?? JSONObject()
            return (o["exclude"] == .bool(true) ? "NOT " : "") + (o["/"]?.stringValue ?? "")
        }
    }

    /// Generated files must be exactly consistent with their table under Apple's matching.
    func expectConsistent(_ routes: [AASARouteShape], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let json = AASAGenerator.applinks(appID: S.app, routes: routes)
        let document = try AASAParser.parse(json)
        let findings = AASAValidator(appID: S.app, routes: routes).validate(document)
        #expect(findings.isEmpty, "\(findings.map(\.message))", sourceLocation: sourceLocation)
    }

    @Test func shopTable() throws {
        let json = AASAGenerator.applinks(appID: S.app, routes: S.shop)
        #expect(summary(json) == [
            "NOT /product/*/*", "/product/?*",
            "NOT /order/*/*", "/order/????????-????-????-????-????????????",
            "/help/?*",
            "/profile",
        ])
        let first = components(json)[1].objectValue
        #expect(first?["comment"] == .string("route product: /product/:id"))
        #expect(json.objectValue?["applinks"]?.objectValue?["details"]?.arrayValue?.first?.objectValue?["appIDs"]
                == .array([.string(S.app)]))
        try expectConsistent(S.shop)
    }

    @Test func mostSpecificFirstRegardlessOfFileOrder() {
        let routes = [
            S.route("any", "/:a/:b", [.parameter(name: "a", kind: .slug), .parameter(name: "b", kind: .slug)]),
            S.route("lit", "/x/:b", [.literal("x"), .parameter(name: "b", kind: .slug)]),
            S.route("both", "/x/y", [.literal("x"), .literal("y")]),
        ]
        let order = summary(AASAGenerator.applinks(appID: S.app, routes: routes)).filter { !$0.hasPrefix("NOT") }
        #expect(order == ["/x/y", "/x/?*", "/?*/?*"])
    }

    @Test func listValuesBecomeOneComponentEachAndNeedNoGuard() throws {
        let routes = [S.route("tab", "/tab/:t", [.literal("tab"), .parameter(name: "t", kind: .oneOf(["a", "b c"]))])]
        #expect(summary(AASAGenerator.applinks(appID: S.app, routes: routes)) == ["/tab/a", "/tab/b%20c"])
        try expectConsistent(routes)
    }

    @Test func requiredQueryKeysBecomeADictionary() throws {
        let routes = [S.route("search", "/search", [.literal("search")], required: [(name: "q", kind: .string)])]
        let c = components(AASAGenerator.applinks(appID: S.app, routes: routes))
        #expect(c.first?.objectValue?["?"] == .object(JSONObject([JSONMember(key: "q", value: .string("?*"))])))
        try expectConsistent(routes)
    }

    @Test func wildcardRouteWithLiteralPrefixMakesTheGuardUnneeded() throws {
        let routes = [
            S.route("topic", "/help/:topic", [.literal("help"), .parameter(name: "topic", kind: .slug)]),
            S.route("help", "/help/*", [.literal("help"), .wildcard]),
        ]
        #expect(summary(AASAGenerator.applinks(appID: S.app, routes: routes)) == ["/help/?*", "/help/?*"])
        try expectConsistent(routes)
    }

    @Test func aRouteAGuardWouldHideIsEmittedBeforeIt() throws {
        let routes = [
            S.route("a", "/a/:x", [.literal("a"), .parameter(name: "x", kind: .int)]),
            S.route("deep", "/:y/b/c", [.parameter(name: "y", kind: .slug), .literal("b"), .literal("c")]),
        ]
        #expect(summary(AASAGenerator.applinks(appID: S.app, routes: routes))
                == ["NOT /*/*/b/c", "/?*/b/c", "NOT /a/*/*", "/a/?*"])
        try expectConsistent(routes)
    }

    @Test func rootRouteIsSlash() throws {
        let routes = [S.route("home", "/", [])]
        #expect(summary(AASAGenerator.applinks(appID: S.app, routes: routes)) == ["/"])
        try expectConsistent(routes)
    }

    /// Known limit: a parameter before a final `*` cannot be kept to one segment (a guard
    /// would hide the route's own deeper paths); the validator says so.
    @Test func parameterBeforeWildcardIsReportedNotHidden() throws {
        let routes = [S.route("files", "/u/:id/files/*",
                              [.literal("u"), .parameter(name: "id", kind: .int), .literal("files"), .wildcard])]
        let document = try AASAParser.parse(AASAGenerator.applinks(appID: S.app, routes: routes))
        let findings = AASAValidator(appID: S.app, routes: routes).validate(document)
        #expect(findings.map(\.code) == [.unroutedPattern])
    }

    @Test func literalsArePercentEncodedAndWildcardCharactersEscaped() {
        let routes = [S.route("odd", "/żółw/a*b?", [.literal("żółw"), .literal("a*b?")])]
        #expect(summary(AASAGenerator.applinks(appID: S.app, routes: routes)) == ["/%C5%BC%C3%B3%C5%82w/a%2Ab%3F"])
    }
}
