import Testing
import DeepLinks

/// Go 1.22 ServeMux rule: overlapping routes must be ordered by specificity, or the
/// table is refused.
@Suite struct RouteConflictTests {
    private func conflict(_ a: String, _ b: String) -> String? {
        loadError(tableJSON(routes: "\(a), \(b)"))
    }

    @Test func overlappingParameterTypesAreAmbiguous() {
        #expect(conflict(#"{"name": "byId", "path": "/p/:id", "params": {"id": "int"}}"#,
                         #"{"name": "bySlug", "path": "/p/:slug", "params": {"slug": "slug"}}"#)
                == #"t.json: at routes[1]: ambiguous routes: "byId" (/p/:id) and "bySlug" (/p/:slug) both match "/p/1" and neither is more specific"#)
    }

    @Test func identicalPatternsAreAmbiguous() {
        #expect(conflict(#"{"name": "a", "path": "/x/y"}"#, #"{"name": "b", "path": "/x/y"}"#)?
            .contains(#"ambiguous routes: "a" (/x/y) and "b" (/x/y) both match "/x/y""#) == true)
        #expect(conflict(#"{"name": "a", "path": "/"}"#, #"{"name": "b", "path": "/"}"#)?
            .contains(#"both match "/""#) == true)
        #expect(conflict(#"{"name": "a", "path": "/h/*"}"#, #"{"name": "b", "path": "/h/*"}"#)?
            .contains(#"both match "/h/x""#) == true)
    }

    @Test func crossedSpecificityIsAmbiguous() {
        // /a/b matches both; each is more specific in one position.
        #expect(conflict(#"{"name": "a", "path": "/a/:x", "params": {"x": "slug"}}"#,
                         #"{"name": "b", "path": "/:y/b", "params": {"y": "slug"}}"#)?
            .contains(#"both match "/a/b""#) == true)
        #expect(conflict(#"{"name": "a", "path": "/a/*"}"#,
                         #"{"name": "b", "path": "/:y/b", "params": {"y": "slug"}}"#)?
            .contains(#"both match "/a/b""#) == true)
    }

    @Test func uuidOverlapsSlugAndString() {
        #expect(conflict(#"{"name": "a", "path": "/o/:x", "params": {"x": "uuid"}}"#,
                         #"{"name": "b", "path": "/o/:y", "params": {"y": "slug"}}"#)?
            .contains(#"both match "/o/00000000-0000-0000-0000-000000000000""#) == true)
        #expect(conflict(#"{"name": "a", "path": "/o/:x", "params": {"x": "string"}}"#,
                         #"{"name": "b", "path": "/o/:y", "params": {"y": ["new"]}}"#)?
            .contains(#"both match "/o/new""#) == true)
    }

    @Test func moreSpecificRoutesAreFine() {
        // literal beats parameter; parameter beats *; literal beats *.
        #expect(conflict(#"{"name": "new", "path": "/product/new"}"#,
                         #"{"name": "product", "path": "/product/:id", "params": {"id": "int"}}"#) == nil)
        #expect(conflict(#"{"name": "any", "path": "/help/*"}"#,
                         #"{"name": "one", "path": "/help/:x", "params": {"x": "slug"}}"#) == nil)
        #expect(conflict(#"{"name": "any", "path": "/*"}"#, #"{"name": "help", "path": "/help/*"}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/a/:x/*", "params": {"x": "slug"}}"#, #"{"name": "b", "path": "/a/*"}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/:a/foo", "params": {"a": "int"}}"#,
                         #"{"name": "b", "path": "/:b/:c", "params": {"b": "slug", "c": "slug"}}"#) == nil)
    }

    @Test func disjointRoutesAreFine() {
        #expect(conflict(#"{"name": "a", "path": "/o/:x", "params": {"x": "int"}}"#,
                         #"{"name": "b", "path": "/o/:y", "params": {"y": "uuid"}}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/o/:x", "params": {"x": ["a", "b"]}}"#,
                         #"{"name": "b", "path": "/o/:y", "params": {"y": ["c", "B"]}}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/o/new"}"#, #"{"name": "b", "path": "/o/:y", "params": {"y": "int"}}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/a"}"#, #"{"name": "b", "path": "/a/b"}"#) == nil)
        #expect(conflict(#"{"name": "a", "path": "/a"}"#, #"{"name": "b", "path": "/a/*"}"#) == nil)  // * needs ≥1 segment
        #expect(conflict(#"{"name": "root", "path": "/"}"#, #"{"name": "all", "path": "/*"}"#) == nil)
    }
}

/// Matching picks the most specific route whatever the file order.
@Suite struct RouteMatchingTests {
    static let routes = [
        #"{"name": "new", "path": "/product/new"}"#,
        #"{"name": "product", "path": "/product/:id", "params": {"id": "int"}}"#,
        #"{"name": "productSlug", "path": "/product/:id/:slug", "params": {"id": "int", "slug": "slug"}}"#,
        #"{"name": "productAny", "path": "/product/*"}"#,
        #"{"name": "idFoo", "path": "/:a/foo", "params": {"a": "int"}}"#,
        #"{"name": "idSlug", "path": "/:b/:c", "params": {"b": "int", "c": "slug"}}"#,
        #"{"name": "root", "path": "/"}"#,
    ]

    static let expectations: [(path: [String], route: String?)] = [
        (["product", "new"], "new"),
        (["product", "42"], "product"),
        (["product", "42", "blue-shirt"], "productSlug"),
        (["product", "abc"], "productAny"),
        (["product", "42", "Blue"], "productAny"),
        (["product", "1", "2", "3"], "productAny"),
        (["1", "foo"], "idFoo"),
        (["7", "bar"], "idSlug"),
        (["x", "foo"], nil),
        (["7", "Foo"], nil),
        ([], "root"),
        (["a"], nil),
    ]

    @Test func mostSpecificWinsInEveryFileOrder() throws {
        var orders = [Self.routes, Array(Self.routes.reversed())]
        var rotated = Self.routes
        for _ in 0..<Self.routes.count - 1 {
            rotated.append(rotated.removeFirst())
            orders.append(rotated)
        }
        for order in orders {
            let t = try RouteTable(json: tableJSON(routes: order.joined(separator: ",")), source: "t.json")
            for (path, expected) in Self.expectations {
                #expect(t.route(forPathSegments: path)?.0.name == expected, "\(path) in order \(order.map { $0.prefix(20) })")
            }
        }
    }

    @Test func parametersAreReported() throws {
        let (route, params) = try #require(shopTable.route(forPathSegments: ["order", "8F14E45F-CEEA-467F-A0E6-4F0D3E3B8A11"]))
        #expect(route.name == "order")
        #expect(params == [NamedValue(name: "id", value: "8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11")])
        let (help, rest) = try #require(shopTable.route(forPathSegments: ["help", "a", "żółw"]))
        #expect(help.name == "help")
        #expect(rest == [NamedValue(name: "*", value: "a/żółw")])
        #expect(shopTable.route(forPathSegments: ["help"]) == nil)  // * needs at least one segment
    }

    @Test func mostSpecificFirstOrder() throws {
        let t = try RouteTable(json: tableJSON(routes: Self.routes.joined(separator: ",")), source: "t.json")
        #expect(t.routesMostSpecificFirst.map(\.name)
                == ["new", "productSlug", "product", "productAny", "idFoo", "idSlug", "root"])
    }
}

/// Across two apps' tables any shared path counts, even where one route is more specific.
@Suite struct RouteTableOverlapTests {
    private func table(_ routes: String) throws -> RouteTable {
        try RouteTable(json: #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.a", "scheme": "a"}, "hosts": ["example.com"], "routes": [\#(routes)]}"#,
                       source: "t.json")
    }

    @Test func everyPairOfRoutesSomePathMatchesIsListedWithThatPath() throws {
        let a = try table(#"{"name": "product", "path": "/product/:id", "params": {"id": "int"}}, {"name": "help", "path": "/help/*"}"#)
        let b = try table(#"{"name": "sale", "path": "/product/sale"}, {"name": "faq", "path": "/help/faq"}, {"name": "about", "path": "/about"}"#)
        let overlaps = a.overlaps(with: b)
        #expect(overlaps.map { "\($0.route.name)-\($0.otherRoute.name)" } == ["help-faq"], "no int is \"sale\"")
        #expect(overlaps.first?.examplePath == "/help/faq")
        let c = try table(#"{"name": "item", "path": "/product/:slug", "params": {"slug": "slug"}}"#)
        #expect(a.overlaps(with: c).map(\.examplePath) == ["/product/1"], "more specific or not, both would open it")
        #expect(b.overlaps(with: try table(#"{"name": "x", "path": "/elsewhere"}"#)).isEmpty)
    }
}
