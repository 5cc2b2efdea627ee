import StrictJSON

/// Input quoted for messages: escaped so that hostile text cannot hide or reorder what a
/// terminal or log viewer shows.
enum TextSafetyQuote {
    static func string(_ text: String) -> String {
        "\"" + TextSafety.escapedForDisplay(text) + "\""
    }

    static func character(_ scalar: Unicode.Scalar) -> String {
        var s = ""
        s.unicodeScalars.append(scalar)
        return "'" + TextSafety.escapedForDisplay(s) + "'"
    }
}
