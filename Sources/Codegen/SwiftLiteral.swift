/// Swift source spellings of values.
enum SwiftLiteral {
    /// A string literal: `"…"` with `\`, `"` and anything outside printable ASCII escaped
    /// as `\u{…}`, so the generated file is plain ASCII.
    static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case " "..."~": out.unicodeScalars.append(scalar)
            default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out + "\""
    }

    static func strings(_ values: [String]) -> String {
        "[" + values.map(string).joined(separator: ", ") + "]"
    }
}
