/// One Apple universal-link pattern (`/`, `?`, `#` values and legacy `paths`): `*` matches
/// any run of characters, none included; `?` matches exactly one character. Both cross
/// `/`: Apple's patterns are not segment-aware. Characters are Unicode scalars. A pattern
/// with substitution variables matches when any of its expansions does.
public struct AASAPattern: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// As written in the file.
    public let text: String
    /// The plain patterns `text` stands for (just `text` without variables).
    public let alternatives: [String]

    /// A plain pattern: `$(` has no special meaning (legacy `paths`, tests).
    public init(_ text: String) {
        self.text = text
        self.alternatives = [text]
    }

    public init(text: String, alternatives: [String]) {
        self.text = text
        self.alternatives = alternatives
    }

    public var description: String { text }

    /// Whole-string match. With `caseSensitive: false` both sides are lowercased first.
    public func matches(_ input: String, caseSensitive: Bool = true) -> Bool {
        let subject = Array((caseSensitive ? input : input.lowercased()).unicodeScalars)
        return alternatives.contains { alternative in
            Self.glob(Array((caseSensitive ? alternative : alternative.lowercased()).unicodeScalars), subject)
        }
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
