import Testing
import DeepLinks

@Suite struct AASAPatternTests {
    @Test(arguments: [
        ("/help/*", "/help/", true),          // * matches nothing too
        ("/help/*", "/help/a", true),
        ("/help/*", "/help/a/b", true),       // * crosses /
        ("/help/*", "/help", false),
        ("/help/*", "/helpdesk", false),
        ("/product/?", "/product/1", true),   // ? is exactly one character
        ("/product/?", "/product/12", false),
        ("/product/?", "/product/", false),
        ("/product/?*", "/product/", false),  // ?* is one or more
        ("/product/?*", "/product/12", true),
        ("/a?c", "/a/c", true),               // ? crosses / too
        ("/exact", "/exact", true),
        ("/exact", "/exact/", false),         // whole-string match
        ("/exact", "/Exact", false),
        ("*", "", true),
        ("", "", true),
        ("", "/", false),
        ("*a*b*c*", "xxaxxbxxcxx", true),
        ("*a*b*c*", "xxaxxcxxbxx", false),
        ("/ż*", "/żółw", true),               // characters are Unicode scalars
        ("/?ółw", "/żółw", true),
    ])
    func matching(pattern: String, input: String, expected: Bool) {
        #expect(AASAPattern(pattern).matches(input) == expected)
    }

    @Test func caseInsensitiveLowercasesBothSides() {
        #expect(AASAPattern("/Help/*").matches("/HELP/x", caseSensitive: false))
        #expect(!AASAPattern("/Help/*").matches("/HELP/x", caseSensitive: true))
    }

    /// Many stars against a long near-miss must finish (backtracking is bounded).
    @Test func hostilePatternTerminates() {
        let pattern = AASAPattern(String(repeating: "*a", count: 200) + "b")
        let input = String(repeating: "a", count: 5000)
        #expect(!pattern.matches(input))
    }
}
