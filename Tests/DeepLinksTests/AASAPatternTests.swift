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
        ("*ab*ab*", "abab", true),
        ("*ab*ab*", "aba", false),
        ("a*a", "a", false),                  // first and last pieces may not overlap
        ("a*a", "aa", true),
        ("*?b?*", "xxbx", true),
        ("*?b?*", "bx", false),
        ("/p/*/x?z*end", "/p/1/2/xyz/end", true),
        (String(repeating: "?", count: 70) + "*", String(repeating: "q", count: 70), true),
        ("*" + String(repeating: "?", count: 69) + "b*", String(repeating: "q", count: 69) + "b", true),
        ("*" + String(repeating: "?", count: 69) + "b*", String(repeating: "q", count: 68) + "b", false),
    ])
    func matching(pattern: String, input: String, expected: Bool) {
        #expect(AASAPattern(pattern).matches(input) == expected)
    }

    @Test func caseInsensitiveLowercasesBothSides() {
        #expect(AASAPattern("/Help/*").matches("/HELP/x", caseSensitive: false))
        #expect(!AASAPattern("/Help/*").matches("/HELP/x", caseSensitive: true))
    }

    /// Near misses that make a backtracking glob quadratic finish at once here.
    @Test func hostilePatternsStayLinear() {
        let input = String(repeating: "a", count: 100_000)
        #expect(!AASAPattern(String(repeating: "*a", count: 500) + "b").matches(input))
        #expect(!AASAPattern("*" + String(repeating: "a", count: 1000) + "b*").matches(input))
        #expect(!AASAPattern("*" + String(repeating: "a", count: 1000) + "b").matches(input))
        #expect(AASAPattern("*" + String(repeating: "a", count: 1000) + "*").matches(input))
    }

    /// The piece search agrees with a plain backtracking matcher on many small cases.
    @Test func agreesWithReferenceMatcher() {
        let alphabet: [Character] = ["a", "b", "/"]
        let patternAlphabet: [Character] = ["a", "b", "/", "*", "?"]
        var generator = SplitMix64(seed: 2026)
        for _ in 0..<3000 {
            let p = String((0..<Int.random(in: 0...6, using: &generator)).map { _ in patternAlphabet.randomElement(using: &generator)! })
            let s = String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(AASAPattern(p).matches(s) == reference(Array(p), Array(s)), "pattern \(p) input \(s)")
        }
    }

    private func reference(_ p: [Character], _ s: [Character]) -> Bool {
        guard let first = p.first else { return s.isEmpty }
        if first == "*" { return (0...s.count).contains { reference(Array(p.dropFirst()), Array(s.dropFirst($0))) } }
        guard let c = s.first, first == "?" || first == c else { return false }
        return reference(Array(p.dropFirst()), Array(s.dropFirst()))
    }
}
