import StrictJSON

/// Names for characters in messages: `U+202E (bidi control)`.
enum CharacterNames {
    static func describe(_ scalar: Unicode.Scalar) -> LinkMessage {
        "U+\(uppercaseHex: scalar.value, width: 4) (\(kind(scalar)))"
    }

    static func kind(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x20, 0x09...0x0D: return "whitespace"
        case 0x00...0x1F, 0x7F...0x9F: return "control character"
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return "bidi control"
        case 0x200B...0x200D, 0x2060, 0xFEFF: return "zero-width character"
        case 0x2028, 0x2029: return "line separator"
        default:
            return TextSafety.isWhitespace(scalar) ? "whitespace" : "format character"
        }
    }
}
