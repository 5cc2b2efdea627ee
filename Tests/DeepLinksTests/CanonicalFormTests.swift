import Testing
import DeepLinks

/// Accepted links and the one canonical form each turns into.
@Suite struct CanonicalFormTests {
    @Test(arguments: [
        // Scheme and host: lowercase, aliases become the canonical host.
        ("https://example.com/product/42", "https://example.com/product/42"),
        ("HTTPS://EXAMPLE.COM/product/42", "https://example.com/product/42"),
        ("https://www.Example.com/product/42", "https://example.com/product/42"),
        // The app's scheme: its "host" is the first path segment.
        ("shop://product/42", "https://example.com/product/42"),
        ("SHOP://product/42", "https://example.com/product/42"),
        ("Shop://profile?tab=orders", "https://example.com/profile?tab=orders"),
        // Percent-encoding: unreserved decoded, the rest uppercase hex, raw non-ASCII encoded.
        ("https://example.com/%70roduct/%34%32", "https://example.com/product/42"),
        ("https://example.com/help/%7Euser", "https://example.com/help/~user"),
        ("https://example.com/help/%41%2d%5F%2E", "https://example.com/help/A-_."),
        ("https://example.com/help/%c5%bc%C3%B3%c5%82w", "https://example.com/help/%C5%BC%C3%B3%C5%82w"),
        ("https://example.com/help/żółw", "https://example.com/help/%C5%BC%C3%B3%C5%82w"),
        ("https://example.com/help/e\u{301}", "https://example.com/help/e%CC%81"),  // no normalisation
        ("https://example.com/help/é", "https://example.com/help/%C3%A9"),
        ("https://example.com/help/%252e", "https://example.com/help/%252e"),      // decoded once: text "%2e"
        ("https://example.com/help/%25", "https://example.com/help/%25"),
        ("https://example.com/help/a;b", "https://example.com/help/a%3Bb"),
        ("https://example.com/help/a%3bb", "https://example.com/help/a%3Bb"),
        ("https://example.com/help/a+b", "https://example.com/help/a+b"),
        ("https://example.com/help/%2B%21%24%26%27%28%29%2A%2C%3D%3A%40", "https://example.com/help/+!$&'()*,=:@"),
        ("https://example.com/help/%3F%23%5B%5D%22%3C%3E%5E%60%7B%7C%7D", "https://example.com/help/%3F%23%5B%5D%22%3C%3E%5E%60%7B%7C%7D"),
        ("https://example.com/help/...", "https://example.com/help/..."),
        ("https://example.com/help/.a", "https://example.com/help/.a"),
        // uuid lowercased.
        ("https://example.com/order/8F14E45F-CEEA-467F-A0E6-4F0D3E3B8A11", "https://example.com/order/8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11"),
        ("https://example.com/order/8F14E45F-CEEA-467F-A0E6-4F0D3E3B8a11", "https://example.com/order/8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11"),
        // Query: declared keys in declaration order, then passthrough keys in listed order.
        ("https://example.com/product/42?utm_campaign=c&variant=2&utm_source=s&ref=r", "https://example.com/product/42?ref=r&variant=2&utm_source=s&utm_campaign=c"),
        ("https://example.com/product/42?", "https://example.com/product/42"),
        ("shop://profile?", "https://example.com/profile"),
        ("https://example.com/product/0", "https://example.com/product/0"),
        ("https://example.com/product/42?utm_source=a+b", "https://example.com/product/42?utm_source=a%2Bb"),  // + is a plus
        ("https://example.com/product/42?utm_source=a%2bb", "https://example.com/product/42?utm_source=a%2Bb"),
        ("https://example.com/product/42?utm_source=a=b", "https://example.com/product/42?utm_source=a%3Db"),
        ("https://example.com/product/42?utm_source=a/b?c:d@e", "https://example.com/product/42?utm_source=a/b?c:d@e"),
        ("https://example.com/product/42?utm_source=a%26b%3Bc", "https://example.com/product/42?utm_source=a%26b%3Bc"),
        ("https://example.com/product/42?utm_source=%7e%41", "https://example.com/product/42?utm_source=~A"),
        ("https://example.com/product/42?utm_source=żółw", "https://example.com/product/42?utm_source=%C5%BC%C3%B3%C5%82w"),
        ("https://example.com/product/42?r%65f=x", "https://example.com/product/42?ref=x"),
        ("https://example.com/profile?tab=wishlist", "https://example.com/profile?tab=wishlist"),
    ])
    func canonicalForm(link: String, canonical: String) {
        expectCanonical(link, canonical)
        expectCanonical(canonical, canonical)  // and it is a fixed point
    }

    @Test func acceptedLinkReportsRouteParamsAndQuery() throws {
        let link = try #require(shopTable.check("shop://product/42?utm_source=mail&ref=spring-sale").link)
        #expect(link == CanonicalLink(canonical: "https://example.com/product/42?ref=spring-sale&utm_source=mail",
                                      route: "product", params: [NamedValue(name: "id", value: "42")],
                                      query: [NamedValue(name: "ref", value: "spring-sale"), NamedValue(name: "utm_source", value: "mail")]))
        let help = try #require(shopTable.check("https://example.com/help/a%2Bb/żółw").link)
        #expect(help.route == "help")
        #expect(help.params == [NamedValue(name: "*", value: "a+b/żółw")])
        let order = try #require(shopTable.check("https://example.com/order/8F14E45F-CEEA-467F-A0E6-4F0D3E3B8A11").link)
        #expect(order.params == [NamedValue(name: "id", value: "8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11")])
    }

    @Test func rootRoute() {
        let t = table(tableJSON(routes: #"{"name": "home", "path": "/"}, {"name": "all", "path": "/*"}"#))
        #expect(t?.check("https://example.com").link?.canonical == "https://example.com/")
        #expect(t?.check("https://example.com/").link?.route == "home")
        #expect(t?.check("app://").link?.canonical == "https://example.com/")
        #expect(t?.check("https://example.com/?").link?.canonical == "https://example.com/")
        #expect(t?.check("https://example.com/x").link?.route == "all")
        #expect(t?.check("https://example.com//").code == .emptySegment)
    }

    @Test func uuidQueryValuesAreLowercased() {
        let t = table(tableJSON(routes: #"{"name": "o", "path": "/o", "query": {"id": "uuid", "n": "string"}}"#))
        #expect(t?.check("https://example.com/o?n=%C3%A9&id=8F14E45F-CEEA-467F-A0E6-4F0D3E3B8A11").link
                == CanonicalLink(canonical: "https://example.com/o?id=8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11&n=%C3%A9", route: "o", params: [],
                                 query: [NamedValue(name: "id", value: "8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11"), NamedValue(name: "n", value: "é")]))
    }

    @Test func canonicalFormLongerThanLimitIsTooLong() {
        // Raw "ż" is 2 bytes but 6 in canonical form.
        let link = "https://example.com/help/" + String(repeating: "ż", count: 500)
        #expect(link.utf8.count <= 2048)
        #expect(shopTable.check(link).code == .tooLong)
        #expect(shopTable.check(link).message == "the canonical form would be 3025 bytes; the limit is 2048")
    }

    @Test func stringTypeCountsScalars() {
        let t = table(tableJSON(routes: #"{"name": "s", "path": "/s/:v", "params": {"v": "string"}}"#))
        #expect(t?.check("https://example.com/s/" + String(repeating: "ż", count: 256)).link != nil)
        #expect(t?.check("https://example.com/s/" + String(repeating: "ż", count: 257)).code == .invalidParameter)
    }
}
