import StrictJSON

/// The characters a link may never carry, raw or percent-decoded: TextSafety's unsafe
/// characters plus Unicode whitespace (both table lookups, no Unicode property calls).
enum ForbiddenCharacters {
    @inline(__always)
    static func contains(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x80 { return v <= 0x20 || v == 0x7F }
        // Most text of links (Latin, Greek, Cyrillic, CJK, emoji) lies in ranges holding
        // neither kind, answered without the lists (a test checks every scalar).
        if (v >= 0xAE && v < 0x600) || (v > 0x3000 && v < 0xFEFF) || (v > 0x1D17A && v < 0xE0000) { return false }
        return TextSafety.isUnsafe(scalar) || TextSafety.isWhitespace(scalar)
    }
}
