import Testing
@testable import DeepLinks

/// The printing half (what the generated router's `canonicalString` uses) writes exactly
/// the canonical form the checking half produces.
@Suite struct CanonicalPrinterTests {
    func segments(of link: CanonicalLink, route: Route) -> [String] {
        var values = link.params.makeIterator()
        var out: [String] = []
        for segment in route.segments {
            switch segment {
            case .literal(let text): out.append(text)
            case .parameter: out.append(values.next()?.value ?? "")
            case .wildcard: out += (values.next()?.value ?? "").split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            }
        }
        return out
    }

    @Test func printsTheCanonicalFormOfEveryAcceptedLink() {
        var generator = SampleLinkGenerator(table: shopTable, seed: 16)
        var checked = 0
        for _ in 0..<5_000 {
            guard case .accepted(let link) = shopTable.check(generator.validLink()),
                  let route = shopTable.routes.first(where: { $0.name == link.route }) else { continue }
            #expect(shopTable.compiled.canonicalString(segments: segments(of: link, route: route), query: link.query) == link.canonical)
            checked += 1
        }
        #expect(checked == 5_000)
    }

    @Test func rootPathAndEncoding() {
        #expect(shopTable.compiled.canonicalString(segments: [], query: []) == "https://example.com/")
        #expect(shopTable.compiled.canonicalString(segments: ["help", "a b;c", "żółw"], query: [NamedValue(name: "q", value: "a+b&c=/?")])
                == "https://example.com/help/a%20b%3Bc/%C5%BC%C3%B3%C5%82w?q=a%2Bb%26c%3D/?")
    }
}
