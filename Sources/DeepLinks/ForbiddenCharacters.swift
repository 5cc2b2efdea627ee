import StrictJSON

/// The characters a link may never carry, raw or percent-decoded: TextSafety's unsafe
/// characters plus Unicode whitespace. The answer for the first two Unicode planes is
/// computed once from TextSafety into a bitmap, because Unicode property lookups cost
/// more than the rest of a link check.
enum ForbiddenCharacters {
    /// Planes 0 and 1 (emoji live in plane 1).
    private static let limit: UInt32 = 0x20000

    private static let bitmap: [UInt64] = {
        var words = [UInt64](repeating: 0, count: Int(limit) / 64)
        for v in 0..<limit {
            guard let scalar = Unicode.Scalar(v) else { continue }  // surrogates never decode
            if TextSafety.isUnsafe(scalar) || TextSafety.isWhitespace(scalar) {
                words[Int(v >> 6)] |= 1 << UInt64(v & 63)
            }
        }
        return words
    }()

    @inline(__always)
    static func contains(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x80 { return v <= 0x20 || v == 0x7F }
        if v < limit { return bitmap[Int(v >> 6)] & (1 << UInt64(v & 63)) != 0 }
        return TextSafety.isUnsafe(scalar) || TextSafety.isWhitespace(scalar)
    }
}
