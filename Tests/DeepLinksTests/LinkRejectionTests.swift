import Testing
import DeepLinks

/// Every code, reached through several spellings: raw, percent-encoded, mixed case,
/// look-alikes and the app's custom scheme.
@Suite struct LinkRejectionTests {
    static let cases: [(LinkErrorCode, [String])] = [
        (.tooLong, [
            "https://example.com/help/" + String(repeating: "a", count: 2024),
            "shop://help/" + String(repeating: "%41", count: 700),
            "https://example.com/help/" + String(repeating: "ż", count: 1012),
        ]),
        (.malformed, [
            "", "example.com/product/42", "//example.com/product/42", "/product/42", ":product/42",
            "https:example.com/product/42", "https:/example.com/product/42", "shop:product/42", "shop:/product/42",
            "https:\\\\example.com/product/42", "1https://example.com/", "ht_tps://example.com/", "java%73cript:alert(1)",
            "https:///product/42", "https://?ref=x",
            "https://example.com\\product\\42", "https://example.com/help/a\\b", "https://example.com/help/a|b",
            "https://example.com/help/{x}", "https://example.com/help/a\"b", "https://example.com/help/<b>",
            "https://example.com/help/a^b", "https://example.com/help/`x`", "https://example.com/help/[x]",
            "shop://[::1]/x", "https://example.com/order/{8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11}",
            "https://example.com/profile?&tab=orders", "https://example.com/profile?tab=orders&",
            "https://example.com/profile?tab=orders&&ref=x", "https://example.com/profile?=orders",
        ]),
        (.schemeNotAllowed, [
            "javascript:alert(1)", "JaVaScRiPt:alert(1)", "javascript://example.com/%0Aalert(1)",
            "data:text/html,<script>alert(1)</script>", "file:///etc/passwd", "http://example.com/product/42",
            "HTTP://example.com/product/42", "intent://product/42#Intent;scheme=shop;end", "ftp://example.com/",
            "shopx://product/42", "shop2://product/42", "vbscript:msgbox", "about:blank", "blob:https://example.com/x",
            "wss://example.com/", "https+x://example.com/",
        ]),
        (.hostNotAllowed, [
            "https://example.com.evil.net/product/42", "https://EXAMPLE.COM.evil.net/product/42",
            "https://evil.net/product/42", "https://exаmple.com/product/42" /* Cyrillic а */,
            "https://ехаmple.com/product/42", "https://xn--exmple-4nf.com/product/42", "https://XN--80AK6AA92E.com/",
            "https://example.com./product/42", "https://www.example.com./product/42",
            "https://127.0.0.1/product/42", "https://2130706433/product/42", "https://0x7f.1/product/42",
            "https://[::1]/product/42", "https://[2001:db8::1]:443/product/42",
            "https://%65xample.com/product/42", "https://example%2Ecom/product/42",
            "https://exam_ple.com/product/42", "https://example.com!/product/42", "https://example.co/product/42",
            "https://sub.example.com/product/42", "https://ｅxample.com/product/42" /* fullwidth */,
        ]),
        (.userInfoNotAllowed, [
            "https://user@example.com/product/42", "https://user:pass@example.com/product/42",
            "https://example.com@evil.net/product/42", "https://@example.com/product/42",
            "https://%75ser@example.com/product/42", "HTTPS://USER@EXAMPLE.COM/product/42",
            "shop://user@product/42", "https://evil.net:443@example.com/", "https://example.com%2F@evil.net/",
        ]),
        (.portNotAllowed, [
            "https://example.com:443/product/42", "https://example.com:8080/product/42", "https://example.com:/product/42",
            "HTTPS://EXAMPLE.COM:443/product/42", "https://example.com:0443/product/42", "https://example.com:%34%34%33/",
            "shop://product:42/", "https://example.com:443", "https://evil.net:1/",
        ]),
        (.fragmentNotAllowed, [
            "https://example.com/product/42#", "https://example.com/product/42#top",
            "https://example.com/profile?tab=orders#settings", "shop://product/42#x", "https://example.com/#",
            "https://example.com#/product/42", "https://example.com/product/42?#",
        ]),
        (.forbiddenCharacter, [
            // An encoded separator is a forbidden character once decoded, wherever it is.
            "https://example.com/help/a%2Fb", "https://example.com/help/a%2fb", "https://example.com/help/a%5Cb", "shop://product%2F42",
            "java\tscript:alert(1)", " https://example.com/product/42", "https://example.com/product/42 ",
            "https://example.com/product/4\n2", "https://example.com/product/42\r", "https://exam\u{200B}ple.com/product/42",
            "https://example.com/help/a\u{202E}b", "https://example.com/help/\u{2066}x", "https://example.com/help/\u{061C}x",
            "https://example.com/help/\u{200E}x", "https://example.com/help/\u{FEFF}x", "https://example.com/help/\u{00A0}x",
            "https://example.com/help/\u{3000}x", "https://example.com/help/\u{2028}x", "https://example.com/help/\u{0085}x",
            "https://example.com/help/\u{00AD}x", "https://example.com/help/\u{7F}x", "\u{0}https://example.com/help/x",
            "https://example.com/help/%E2%80%AE", "https://example.com/help/%e2%80%ae", "https://example.com/help/%00",
            "https://example.com/help/%09", "https://example.com/help/%20", "https://example.com/help/a%0Ab",
            "https://example.com/help/%C2%A0", "https://example.com/help/%C2%85", "https://example.com/help/%7F",
            "https://example.com/help/%EF%BB%BF", "https://example.com/help/%E2%80%8B", "https://example.com/help/%C2%AD",
            "https://example.com/profile?tab=%0Aorders", "https://example.com/profile?t%00ab=orders",
            "https://example.com/product/42?utm_source=a%20b", "https://%09example.com/product/42",
            "https://example.com%E2%80%AE/product/42", "shop://product/%E2%80%8F42", "shop://%20product/42",
        ]),
        (.invalidPercentEncoding, [
            "https://example.com/help/%", "https://example.com/help/%2", "https://example.com/help/%G1",
            "https://example.com/help/%zz", "https://example.com/help/%C5", "https://example.com/help/%FF",
            "https://example.com/help/%C0%AF", "https://example.com/help/%ED%A0%80", "https://example.com/help/%F4%90%80%80",
            "https://example.com/help/%C5%", "https://example.com/help/ż%BC", "https://example.com/product/42?ref=%",
            "https://example.com/product/42?%=x", "https://example.com/product/42?ref=%E2%80", "https://exa%mple.com/",
            "shop://%zz/42",
        ]),
        (.dotSegment, [
            "https://example.com/help/.", "https://example.com/help/..", "https://example.com/help/%2e",
            "https://example.com/help/%2E%2E", "https://example.com/help/.%2e", "https://example.com/help/%2e.",
            "https://example.com/help/../product/42", "https://example.com/./product/42", "shop://../product/42",
            "shop://./product/42", "https://example.com/help/a/./b",
        ]),
        (.emptySegment, [
            "https://example.com//product/42", "https://example.com/product//42", "shop:///product/42",
            "https://example.com/help/a//b", "shop://product//42", "https://example.com///",
        ]),
        (.trailingSlash, [
            "https://example.com/product/42/", "shop://product/42/", "https://example.com/help/a/",
            "https://example.com/profile/?tab=orders", "SHOP://product/42/?ref=x", "shop://profile/",
        ]),
        (.tooManyPathSegments, [
            "https://example.com/help/" + Array(repeating: "a", count: 32).joined(separator: "/"),
            "shop://help/" + Array(repeating: "%41", count: 32).joined(separator: "/"),
            "https://example.com/" + String(repeating: "/", count: 40),
        ]),
        (.tooManyQueryItems, [
            "https://example.com/product/42?" + (0..<65).map { "k\($0)=v" }.joined(separator: "&"),
            "https://example.com/product/42?" + String(repeating: "&", count: 64),
            "shop://product/42?" + (0..<65).map { _ in "ref=a" }.joined(separator: "&"),
        ]),
        (.unknownQueryParameter, [
            "https://example.com/product/42?foo=1", "https://example.com/product/42?REF=x", "https://example.com/product/42?Ref=x",
            "https://example.com/product/42?tab=orders", "https://example.com/product/42?réf=x",
            "https://example.com/product/42?ref=x&utm_term=y", "shop://product/42?r%C3%A9f=x",
            "https://example.com/product/42?utm_source=a&x", "https://example.com/product/42?ref%3D=x",
        ]),
        (.duplicateQueryParameter, [
            "https://example.com/product/42?ref=a&ref=b", "https://example.com/product/42?ref=a&ref=a",
            "https://example.com/product/42?ref=a&r%65f=b", "https://example.com/product/42?utm_source=a&utm_source=b",
            "https://example.com/product/42?foo=a&foo=b", "shop://product/42?variant=1&variant=1",
        ]),
        (.credentialInQuery, [
            "https://example.com/product/42?token=abc", "https://example.com/product/42?TOKEN=abc",
            "https://example.com/product/42?Access_Token=abc", "https://example.com/product/42?%74oken=abc",
            "https://example.com/product/42?id_token=x", "https://example.com/product/42?password=hunter2",
            "https://example.com/product/42?secret", "https://example.com/product/42?api_key=k", "https://example.com/product/42?AUTH=1",
            "https://example.com/product/42?session=1", "https://example.com/product/42?sid=1", "https://example.com/product/42?code=1",
            "https://example.com/product/42?foo=1&token=x", "https://example.com/nowhere?token=x", "shop://product/42?SeSsIoN=x",
            "https://example.com/product/42?ref=a&ref=b&token=x",
        ]),
        (.invalidParameter, [
            "https://example.com/product/abc", "https://example.com/product/042", "https://example.com/product/-1",
            "https://example.com/product/+1", "https://example.com/product/1234567890123456789", "https://example.com/product/4%2E2",
            "https://example.com/product/%EF%BC%94%EF%BC%92" /* fullwidth digits */, "https://example.com/product/٤٢" /* Arabic-Indic */,
            "https://example.com/order/not-a-uuid", "https://example.com/order/8f14e45f-ceea-467f-a0e6-4f0d3e3b8a1",
            "https://example.com/order/8f14e45fceea467fa0e64f0d3e3b8a11", "https://example.com/order/%7B8f14e45f-ceea-467f-a0e6-4f0d3e3b8a11%7D",
            "https://example.com/product/42?ref=Spring", "https://example.com/product/42?ref=a_b", "https://example.com/product/42?variant=x",
            "https://example.com/product/42?ref", "https://example.com/product/42?ref=", "https://example.com/profile?tab=Orders",
            "https://example.com/profile?tab=order", "https://example.com/product/42?utm_source=",
            "https://example.com/product/42?ref=" + String(repeating: "a", count: 65),
        ]),
        (.noMatchingRoute, [
            "https://example.com/", "https://example.com", "https://example.com/products/42", "https://example.com/Product/42",
            "https://example.com/product", "https://example.com/product/42/extra", "https://example.com/help", "shop://",
            "shop://Product/42", "SHOP://PRODUCT/42", "https://example.com/%70roduct/42/x", "https://example.com/?ref=x",
        ]),
    ]

    @Test(arguments: cases)
    func rejectedWithCode(code: LinkErrorCode, links: [String]) {
        for link in links {
            let result = shopTable.check(link)
            #expect(result.code == code, "\(link.debugDescription) → \(result)")
            // Messages never carry hostile characters raw.
            if let message = result.message {
                #expect(!message.unicodeScalars.contains(where: isHostile), "\(message.debugDescription)")
            }
        }
    }

    private func isHostile(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return true }
        if v >= 0x2000 && v <= 0x206F && v != 0x2013 { return true }  // en dash is ours
        return v == 0xFEFF || v == 0x061C || v == 0x00AD
    }

    @Test func everyCodeIsCovered() {
        let covered = Set(Self.cases.map(\.0))
        #expect(covered == Set(LinkErrorCode.allCases))
    }

    @Test func limitsAreInclusive() {
        let longest = "https://example.com/help/" + String(repeating: "a", count: 2048 - 25)
        #expect(longest.utf8.count == 2048)
        #expect(shopTable.check(longest).link != nil)
        #expect(shopTable.check(longest + "a").code == .tooLong)
        let thirtyTwo = "https://example.com/help/" + Array(repeating: "a", count: 31).joined(separator: "/")
        #expect(shopTable.check(thirtyTwo).link?.params == [NamedValue(name: "*", value: Array(repeating: "a", count: 31).joined(separator: "/"))])
        let keys = (0..<64).map { "k\($0)" }
        let wide = table(tableJSON(routes: #"{"name": "w", "path": "/w", "query": {\#(keys.map { "\"\($0)\": \"int\"" }.joined(separator: ", "))}}"#))
        #expect(wide?.check("https://example.com/w?" + keys.map { "\($0)=1" }.joined(separator: "&")).link?.query.count == 64)
        #expect(wide?.check("https://example.com/w?" + keys.map { "\($0)=1" }.joined(separator: "&") + "&k0=1").code == .tooManyQueryItems)
    }

    @Test func requiredQueryKeys() {
        let t = table(tableJSON(routes: #"{"name": "s", "path": "/s", "query": {"q": {"type": "slug", "required": true}, "p": "int"}}"#))
        #expect(t?.check("https://example.com/s?p=1").code == .invalidParameter)
        #expect(t?.check("https://example.com/s?p=1").message == #"route "s" requires query key "q""#)
        #expect(t?.check("https://example.com/s?p=1&q=x").link?.canonical == "https://example.com/s?q=x&p=1")
    }

    /// The order of checks decides which single code a link with several problems gets.
    @Test(arguments: [
        ("https://user@example.com:443/a#x", LinkErrorCode.fragmentNotAllowed),
        ("https://user@evil.net:443/a", .userInfoNotAllowed),
        ("https://evil.net:443/a", .portNotAllowed),
        ("http://user@example.com/a", .schemeNotAllowed),
        ("java\tscript:alert(1)", .forbiddenCharacter),
        ("https://evil.net/help/%2e/", .hostNotAllowed),
        ("https://example.com/help/%zz/%00", .invalidPercentEncoding),
        ("https://example.com/help/%00/%zz", .forbiddenCharacter),
        ("https://example.com/help/../", .dotSegment),
        ("https://example.com//help/a/", .emptySegment),
        ("https://example.com/nowhere/?ref=x", .trailingSlash),
        ("https://example.com/nowhere?token=1&token=2", .credentialInQuery),
        ("https://example.com/nowhere?x=1&x=2", .duplicateQueryParameter),
        ("https://example.com/nowhere?x=1", .noMatchingRoute),
        ("https://example.com/product/x?x=1", .invalidParameter),
        ("https://example.com/product/1?x=1&ref=A", .unknownQueryParameter),
        ("https://example.com/a\\b#c", .malformed),
    ])
    func checksRunInDocumentedOrder(link: String, code: LinkErrorCode) {
        #expect(shopTable.check(link).code == code, "\(link.debugDescription) → \(shopTable.check(link))")
    }

    @Test func messagesArePrecise() {
        #expect(shopTable.check("https://example.com:443/product/42").message
                == #"the link has a port ("443" after ':' at byte offset 19); ports are not allowed"#)
        #expect(shopTable.check("java\tscript:alert(1)").message == "the link contains U+0009 (whitespace) at byte offset 4")
        #expect(shopTable.check("https://example.com/help/a\u{202E}b").message == "the link contains U+202E (bidi control) at byte offset 26")
        #expect(shopTable.check("https://example.com/help/%E2%80%AE").message == "path segment 2 contains U+202E (bidi control) after percent-decoding")
        #expect(shopTable.check("https://exаmple.com/").message?.hasPrefix(#"the host "exаmple.com" has non-ASCII characters"#) == true)
        #expect(shopTable.check("https://example.com/product/4x").message
                == #"path segment 2 "4x" is not a valid :id for route "product" (/product/:id): it must be an int (1–18 ASCII digits, no sign, no leading zero)"#)
        #expect(shopTable.check("http://example.com/").message == #"scheme "http" is not allowed (accepted: https, shop)"#)
        #expect(shopTable.check("https://example.com/help/%G1").message == "path segment 2: '%' at byte offset 25 is not followed by two hex digits")
        #expect(shopTable.check("https://example.com/product/42?foo=1").message
                == #"query key "foo" is not declared by route "product" nor passed through"#)
    }

    /// An unlisted host with a label in IDNA's `xn--` form, in any case and at any label,
    /// gets the hint; a host that merely contains the letters does not.
    @Test func punycodeHostsGetTheHint() {
        let hint = "(punycode hosts must be listed as such)"
        for host in ["xn--exmple-4nf.com", "XN--80AK6AA92E.com", "shop.Xn--p1ai", "a.b.xn--c"] {
            #expect(shopTable.check("https://\(host)/").message?.contains(hint) == true, "\(host)")
        }
        for host in ["axn--b.com", "xn-a.com", "example.xn-", "x.n--a.com"] {
            #expect(shopTable.check("https://\(host)/").message?.contains(hint) == false, "\(host)")
        }
    }
}
