import StrictJSON

/// The characters a link may never carry, raw or percent-decoded: TextSafety's unsafe
/// characters plus Unicode whitespace (both table lookups, no Unicode property calls).
enum ForbiddenCharacters {
    @inline(__always)
    static func contains(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x80 { return v <= 0x20 || v == 0x7F }
        return TextSafety.isUnsafe(scalar) || TextSafety.isWhitespace(scalar)
    }
}
