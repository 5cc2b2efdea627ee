/// The "did you mean" of unknown options and commands.
public enum EditDistance {
    /// Edits between two words: insertions, deletions, substitutions and swaps of two
    /// neighbouring letters (`sedn` is one edit from `send`), over Unicode scalars.
    public static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // d[i][j]: the distance between a's first i letters and b's first j.
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }

    /// The candidate closest to `word` when it is close enough to be a likely typo: at
    /// most 2 edits (1 for words of up to 4 letters), or `word` is the start of exactly
    /// one candidate (`--dry` for `--dry-run`). Ties go to the first candidate.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        guard !word.isEmpty else { return nil }
        let limit = word.count <= 4 ? 1 : 2
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let d = between(word, candidate)
            if d <= limit, d < (best?.distance ?? Int.max) { best = (candidate, d) }
        }
        if let best { return best.candidate }
        let prefixed = candidates.filter { word.count >= 3 && $0.hasPrefix(word) }
        return prefixed.count == 1 ? prefixed[0] : nil
    }
}
