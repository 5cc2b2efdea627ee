/// One Apple universal-link pattern (`/`, `?`, `#` values and legacy `paths`): `*` matches
/// any run of characters, none included; `?` matches exactly one character. Both cross
/// `/`: Apple's patterns are not segment-aware. Characters are Unicode scalars.
public struct AASAPattern: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let text: String
    private let scalars: [Unicode.Scalar]

    public init(_ text: String) {
        self.text = text
        self.scalars = Array(text.unicodeScalars)
    }

    public var description: String { text }

    /// True when the pattern is `*` alone (matches everything).
    public var matchesEverything: Bool { scalars.allSatisfy { $0 == "*" } && !scalars.isEmpty }

    /// Whole-string match. With `caseSensitive: false` both sides are lowercased first.
    public func matches(_ input: String, caseSensitive: Bool = true) -> Bool {
        if caseSensitive {
            return Self.glob(scalars, Array(input.unicodeScalars))
        }
        return Self.glob(Array(text.lowercased().unicodeScalars), Array(input.lowercased().unicodeScalars))
    }

    /// Iterative glob with backtracking to the last `*`: O(pattern × input) at worst, no
    /// recursion, so hostile patterns cannot blow the stack.
    static func glob(_ pattern: [Unicode.Scalar], _ input: [Unicode.Scalar]) -> Bool {
        var p = 0, i = 0
        var starP = -1, starI = 0
        while i < input.count {
            if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == input[i])) {
                p += 1
                i += 1
            } else if p < pattern.count && pattern[p] == "*" {
                starP = p
                starI = i
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starI += 1
                i = starI
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
