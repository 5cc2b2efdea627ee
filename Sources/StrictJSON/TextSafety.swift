/// Characters that must never reach a terminal, a log viewer or a link raw: they hide,
/// reorder or break text (Trojan Source, CVE-2021-42574). Shared by the JSON writer, the
/// display escaper and the deep-link canonicaliser so all three agree.
///
/// Self-contained (standard library only): the generated Swift router embeds this file
/// with the canonicaliser (see docs/codegen.md).
public enum TextSafety {
    /// True for C0 and C1 controls, DEL, U+2028/U+2029, bidi controls and every other
    /// format (Cf) character: zero-width spaces and joiners, U+FEFF, soft hyphen, tags…
    @inlinable @inline(__always)
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v <= 0x9F) { return true }
        if v < 0xAD { return false }
        return isUnsafeAbove00AC(v)
    }

    /// Unicode whitespace (White_Space property): space, tab, NBSP, ideographic space…
    @inlinable @inline(__always)
    public static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v == 0x20 || (v >= 0x09 && v <= 0x0D) { return true }
        if v < 0x85 { return false }
        return isWhitespaceFrom0085(v)
    }

    /// The unsafe characters above U+00AC: the explicit list in `isUnsafeByProperties`
    /// plus every Cf, Zl and Zp scalar of the toolchain's Unicode data, as ranges the
    /// compiler turns into a few comparisons (a Unicode property lookup costs hundreds of
    /// instructions). A test checks every scalar against `isUnsafeByProperties`, so a
    /// Unicode update cannot make them drift apart.
    @inlinable
    static func isUnsafeAbove00AC(_ v: UInt32) -> Bool {
        switch v {
        case 0xAD, 0x600...0x605, 0x61C, 0x6DD, 0x70F, 0x890...0x891, 0x8E2, 0x180E, 0x200B...0x200F,
             0x2028...0x202E, 0x2060...0x206F, 0xFEFF, 0xFFF9...0xFFFB, 0x110BD, 0x110CD, 0x13430...0x1343F,
             0x1BCA0...0x1BCA3, 0x1D173...0x1D17A, 0xE0001, 0xE0020...0xE007F:
            return true
        default:
            return false
        }
    }

    /// White_Space scalars from U+0085 on, checked the same way against the property.
    @inlinable
    static func isWhitespaceFrom0085(_ v: UInt32) -> Bool {
        switch v {
        case 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// The definition the tables are checked against, from Unicode properties.
    static func isUnsafeByProperties(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v <= 0x9F) { return true }
        switch v {
        case 0x2028, 0x2029: return true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0x061C, 0xFEFF, 0x00AD: return true
        default: break
        }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .control: return true
        default: return false
        }
    }

    /// The text with every unsafe character (and backslash and double quote) written as
    /// a JSON-style escape, so a message can quote hostile input safely.
    public static func escapedForDisplay(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar == "\\" { out += "\\\\"; continue }
            if scalar == "\"" { out += "\\\""; continue }
            if isUnsafe(scalar) {
                appendUnicodeEscape(scalar, to: &out)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `"text"`, escaped for display: the one way any message quotes input, a name or a
    /// path. Printable ASCII without quotes or backslashes (the usual route name, key or
    /// path) is copied as it is.
    public static func quoted(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) { return "\"" + text + "\"" }
        return "\"" + escapedForDisplay(text) + "\""
    }

    /// One character quoted for display, as `'x'` (`'\u202e'` for an unsafe one).
    public static func quoted(_ scalar: Unicode.Scalar) -> String {
        var text = ""
        text.unicodeScalars.append(scalar)
        return "'" + escapedForDisplay(text) + "'"
    }

    /// `\uXXXX` (lowercase hex; a surrogate pair above U+FFFF), as JSON writes it.
    static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to out: inout String) {
        func unit(_ u: UInt32) { out += "\\u" + Hex.padded(UInt64(u), width: 4) }
        let v = scalar.value
        if v > 0xFFFF {
            unit(0xD800 + ((v - 0x10000) >> 10))
            unit(0xDC00 + ((v - 0x10000) & 0x3FF))
        } else {
            unit(v)
        }
    }
}

extension TextSafety {
    /// `escapedForDisplay` for quoting input in an error: cut after `limit` characters,
    /// with the size of what was left out, so a 30 KB header cannot make a 30 KB message.
    public static func excerpt(_ text: String, limit: Int = 200) -> String {
        guard text.unicodeScalars.count > limit else { return escapedForDisplay(text) }
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit)))
        return escapedForDisplay(kept) + "… (\(text.utf8.count) bytes)"
    }

    /// Text already fit for display, cut to at most about `maxBytes` UTF-8 bytes at a
    /// character boundary, marked with "…" when cut.
    public static func clipped(_ text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += UTF8.width(scalar)
            if bytes > maxBytes { break }
            out.unicodeScalars.append(scalar)
        }
        return out + "…"
    }
}
