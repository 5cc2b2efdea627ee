/// Characters that must never reach a terminal, a log viewer or a link raw: they hide,
/// reorder or break text (Trojan Source, CVE-2021-42574). Shared by the JSON writer, the
/// display escaper and the deep-link canonicaliser so all three agree.
public enum TextSafety {
    /// True for C0 and C1 controls, DEL, U+2028/U+2029, bidi controls and every other
    /// format (Cf) character: zero-width spaces and joiners, U+FEFF, soft hyphen, tags…
    @inline(__always)
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v <= 0x9F) { return true }
        if v < 0xAD { return false }
        return isUnsafeSlow(scalar)
    }

    @usableFromInline
    static func isUnsafeSlow(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2028, 0x2029: return true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0x061C, 0xFEFF, 0x00AD: return true
        default: break
        }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .control: return true
        default: return false
        }
    }

    /// Unicode whitespace (White_Space property): space, tab, NBSP, ideographic space…
    @inline(__always)
    public static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v == 0x20 || (v >= 0x09 && v <= 0x0D) { return true }
        if v < 0x80 { return false }
        return scalar.properties.isWhitespace
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
                JSONWriter.appendUnicodeEscape(scalar, to: &out)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
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
