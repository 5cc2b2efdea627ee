/// Turning route-table names into Swift names, and the rules they must then follow.
enum SwiftNames {
    /// Every Swift keyword (declarations, statements, expressions, patterns) and the
    /// contextual words that cannot name a case or type without backticks.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if",
        "in", "repeat", "return", "throw", "switch", "where", "while",
        "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try",
        "_", "Type", "Protocol",
    ]

    /// `order-item`, `order_item`, `order.item` → `orderItem`; `Utm_Source` → `utmSource`.
    /// Separators are the characters route names and query keys may hold besides letters
    /// and digits: `- . _ ~`.
    static func lowerCamel(_ name: String) -> String {
        let words = words(name)
        guard let first = words.first else { return "" }
        return lowercasedFirst(first) + words.dropFirst().map(uppercasedFirst).joined()
    }

    static func upperCamel(_ name: String) -> String {
        words(name).map(uppercasedFirst).joined()
    }

    /// Splits at every character that is not an ASCII letter or digit.
    static func words(_ name: String) -> [String] {
        name.split(whereSeparator: { !($0.isASCII && ($0.isLetter || $0.isNumber)) }).map(String.init)
    }

    static func uppercasedFirst(_ s: String) -> String { s.prefix(1).uppercased() + s.dropFirst() }

    /// Lowercases a leading run of capitals (`URLPath` → `urlPath`, `ID` → `id`).
    static func lowercasedFirst(_ s: String) -> String {
        let chars = Array(s)
        var n = 0
        while n < chars.count, chars[n].isUppercase { n += 1 }
        if n > 1, n < chars.count { n -= 1 }  // keep the capital that starts the next word
        return String(chars[..<n]).lowercased() + String(chars[n...])
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, the ASCII identifiers this generator writes.
    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// The name as a declaration may spell it: keywords in backticks.
    static func declared(_ s: String) -> String { keywords.contains(s) ? "`\(s)`" : s }
}
