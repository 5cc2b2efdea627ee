/// One Apple universal-link pattern (`/`, `?`, `#` values and legacy `paths`): `*` matches
/// any run of characters, none included; `?` matches exactly one character. Both cross
/// `/`: Apple's patterns are not segment-aware. Characters are Unicode scalars. A pattern
/// with substitution variables matches when any of its expansions does.
public struct AASAPattern: Sendable, Hashable, CustomStringConvertible {
    /// As written in the file.
    public let text: String
    /// The plain patterns `text` stands for (just `text` without variables).
    public let alternatives: [String]
    private let compiled: [WildcardGlob]
    private let compiledLowercased: [WildcardGlob]

    /// A plain pattern: `$(` has no special meaning (legacy `paths`, tests).
    public init(_ text: String) {
        self.init(text: text, alternatives: [text])
    }

    public init(text: String, alternatives: [String]) {
        self.text = text
        self.alternatives = alternatives
        self.compiled = alternatives.map { WildcardGlob($0) }
        self.compiledLowercased = alternatives.map { WildcardGlob($0.lowercased()) }
    }

    public var description: String { text }

    public static func == (a: AASAPattern, b: AASAPattern) -> Bool {
        a.text == b.text && a.alternatives == b.alternatives
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(text)
        hasher.combine(alternatives)
    }

    /// Whole-string match. With `caseSensitive: false` both sides are lowercased first.
    public func matches(_ input: String, caseSensitive: Bool = true) -> Bool {
        let subject = Array((caseSensitive ? input : input.lowercased()).unicodeScalars)
        return (caseSensitive ? compiled : compiledLowercased).contains { $0.matches(subject) }
    }
}

/// A `*`/`?` pattern split at its stars: the first piece must match at the start, the last
/// at the end, and the ones between are found left to right, each at its leftmost
/// occurrence (which is always a safe choice when stars separate them). Finding a piece
/// uses bit-parallel shift-and, so matching costs about input length × piece length / 64,
/// never the quadratic backtracking a naive glob falls into on near misses.
struct WildcardGlob: Sendable {
    /// The pieces between stars (possibly empty at either end).
    private let pieces: [Piece]
    private let hasStar: Bool

    init(_ pattern: String) {
        var pieces: [[Unicode.Scalar]] = [[]]
        for scalar in pattern.unicodeScalars {
            if scalar == "*" { pieces.append([]) } else { pieces[pieces.count - 1].append(scalar) }
        }
        self.hasStar = pieces.count > 1
        self.pieces = pieces.map(Piece.init)
    }

    func matches(_ input: [Unicode.Scalar]) -> Bool {
        guard hasStar, let first = pieces.first, let last = pieces.last else {
            return pieces[0].count == input.count && pieces[0].matches(input, at: 0)
        }
        guard input.count >= first.count + last.count,
              first.matches(input, at: 0), last.matches(input, at: input.count - last.count) else { return false }
        var position = first.count
        let end = input.count - last.count
        for piece in pieces.dropFirst().dropLast() where piece.count > 0 {
            guard let found = piece.firstOccurrence(in: input, from: position, to: end) else { return false }
            position = found + piece.count
        }
        return true
    }

    /// A run of literal characters and `?`, with its shift-and masks built once.
    struct Piece: Sendable {
        let scalars: [Unicode.Scalar]
        private let words: Int
        /// Bit j set where the piece has `?` (matches any character).
        private let wildcardMask: [UInt64]
        /// Per literal character: the wildcard mask plus the positions holding it.
        private let masks: [Unicode.Scalar: [UInt64]]

        var count: Int { scalars.count }

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
            words = (scalars.count + 63) / 64
            var wildcard = [UInt64](repeating: 0, count: words)
            for (j, p) in scalars.enumerated() where p == "?" { wildcard[j / 64] |= 1 << UInt64(j % 64) }
            var masks: [Unicode.Scalar: [UInt64]] = [:]
            for (j, p) in scalars.enumerated() where p != "?" {
                masks[p, default: wildcard][j / 64] |= 1 << UInt64(j % 64)
            }
            wildcardMask = wildcard
            self.masks = masks
        }

        func matches(_ input: [Unicode.Scalar], at start: Int) -> Bool {
            for (i, p) in scalars.enumerated() where p != "?" && p != input[start + i] { return false }
            return true
        }

        /// Leftmost start of this piece inside `input[from..<to]`: bit j of the state says
        /// "the last j+1 characters match the piece's first j+1".
        func firstOccurrence(in input: [Unicode.Scalar], from: Int, to: Int) -> Int? {
            let m = scalars.count
            guard m > 0, to - from >= m else { return m == 0 ? from : nil }
            let lastWord = (m - 1) / 64, lastBit: UInt64 = 1 << UInt64((m - 1) % 64)
            var state = [UInt64](repeating: 0, count: words)
            for i in from..<to {
                let mask = masks[input[i]] ?? wildcardMask
                var carry: UInt64 = 1  // a match may start at every position
                for w in 0..<words {
                    let next = state[w] >> 63
                    state[w] = ((state[w] << 1) | carry) & mask[w]
                    carry = next
                }
                if state[lastWord] & lastBit != 0 { return i - m + 1 }
            }
            return nil
        }
    }
}
