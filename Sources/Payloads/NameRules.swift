/// Template names double as file names, so they are kept to a safe alphabet.
public enum TemplateName {
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2D
        }
    }
}

/// BCP 47 language tags in the simple form templates use: `pl`, `pl-PL`, `zh-Hant-TW`.
enum LanguageTag {
    static func isValid(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.utf8.count),
              first.utf8.allSatisfy({ ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }) else { return false }
        return parts.dropFirst().allSatisfy { p in
            (1...8).contains(p.utf8.count) && p.utf8.allSatisfy { b in
                ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || (b >= 0x30 && b <= 0x39)
            }
        }
    }

    /// `pl-PL` → [`pl-PL`, `pl`]: the variants to try, most specific first (case kept).
    static func fallbackChain(_ tag: String) -> [String] {
        var chain: [String] = []
        var parts = tag.split(separator: "-").map(String.init)
        while !parts.isEmpty {
            chain.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return chain
    }
}
