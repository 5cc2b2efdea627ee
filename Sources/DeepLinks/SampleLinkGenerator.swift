/// A seeded generator of links for a route table: valid ones in many spellings (mixed
/// case, percent-encoding, aliases, the app's scheme, raw non-ASCII) and hostile ones
/// (one attack or mistake applied to a valid link). Used by the round-trip property
/// tests and the `links` benchmark; the same seed gives the same links everywhere.
public struct SampleLinkGenerator {
    /// How valid links are spelled.
    public enum Style: Sendable {
        /// Every variation: mixed case, percent-encoding, raw non-ASCII, punctuation.
        case varied
        /// What campaign tools usually send: lowercase https, ASCII words, no encoding.
        case plain
    }

    private let table: RouteTable
    private let style: Style
    private var rng: SplitMix64

    public init(table: RouteTable, seed: UInt64, style: Style = .varied) {
        self.table = table
        self.style = style
        self.rng = SplitMix64(seed: seed)
    }

    /// A hostile link with probability `hostileFraction`, else a valid one.
    public mutating func next(hostileFraction: Double) -> String {
        Double(rng.next() >> 11) / Double(1 << 53) < hostileFraction ? hostileLink() : validLink()
    }

    /// A link the table accepts, spelled in one of many equivalent ways.
    public mutating func validLink() -> String {
        let route = table.routes[rng.below(table.routes.count)]
        var link = ""
        var pathSegments: [String] = []
        for segment in route.segments {
            switch segment {
            case .literal(let text): pathSegments.append(maybeEncoded(text))
            case .parameter(_, let type): pathSegments.append(pathValue(type))
            case .wildcard:
                for _ in 0...rng.below(3) { pathSegments.append(pathValue(.string)) }
            }
        }
        if let scheme = table.app.scheme, rng.below(3) == 0 {
            link = mixedCase(scheme) + "://" + pathSegments.joined(separator: "/")
        } else {
            link = mixedCase("https") + "://" + mixedCase(table.hosts[rng.below(table.hosts.count)])
                + "/" + pathSegments.joined(separator: "/")
        }
        var items: [String] = []
        for parameter in route.query where parameter.required || rng.below(2) == 0 {
            items.append(parameter.key + "=" + queryValue(parameter.type))
        }
        for key in table.passthroughQuery where rng.below(4) == 0 {
            items.append(key + "=" + queryValue(.string))
        }
        rng.shuffle(&items)
        if !items.isEmpty {
            link += "?" + items.joined(separator: "&")
        } else if rng.below(8) == 0 {
            link += "?"
        }
        return link
    }

    /// A valid link with one thing wrong that the canonicaliser must refuse.
    public mutating func hostileLink() -> String {
        var link = validLink()
        let host = table.hosts[0]
        switch rng.below(18) {
        case 0: insert(["\t", "\n", "\r", " ", "\u{202E}", "\u{200B}", "\u{2066}", "\u{00A0}", "\u{0}", "\u{7F}"], into: &link)
        case 1: link = pick(["javascript:alert(1)//", "http://\(host)/", "data:text/html,", "file:///", "intent://"]) + link.afterScheme
        case 2: link = "https://" + pick(["\(host).evil.net", "ex\u{0430}mple.com", "xn--80ak6aa92e.com", "\(host).", "127.0.0.1", "[::1]", "%65\(host.dropFirst())"]) + link.pathAndQuery
        case 3: link = "https://" + pick(["user@", "user:pw@", "@"]) + host + link.pathAndQuery
        case 4: link = "https://" + host + pick([":443", ":8080", ":"]) + link.pathAndQuery
        case 5: link += pick(["#", "#top", "#/x"])
        case 6: link = "https://\(host)" + pick(["/../", "/%2e%2e/", "/./", "/.%2E/"]) + link.pathAndQuery.dropFirst()
        case 7: link = "https://\(host)/" + link.pathAndQuery
        case 8: link = link.pathPart + "/" + link.queryPart
        case 9: link = link.pathPart + pick(["/%zz", "/%C5", "/%", "/%E2%80%AE", "/%00", "/%20"]) + link.queryPart
        case 10: link += (link.contains("?") ? "&" : "?") + pick(["token=abc", "Access_Token=x", "%74oken=x", "password=x", "sid=1"])
        case 11: link += (link.contains("?") ? "&" : "?") + pick(["nope=1", "x=", "UTM_SOURCE=a"])
        case 12: link += (link.contains("?") ? "&" : "?") + "dup=1&dup=2"
        case 13: link = link.pathPart + "/" + Array(repeating: "s", count: LinkLimits.maxPathSegments + 1).joined(separator: "/")
        case 14: link += (link.contains("?") ? "&" : "?") + (0..<LinkLimits.maxQueryItems + 1).map { "k\($0)=1" }.joined(separator: "&")
        case 15: link = link.pathPart + "/" + String(repeating: "a" as Character, count: LinkLimits.maxBytes + 2)
        case 16: link = "https://\(host)" + pick(["/\\", "/a|b", "/{x}", "/<x>"]) + link.pathAndQuery
        default: link = "https://\(host)/no-such-route-\(rng.below(1000))" + link.queryPart
        }
        return link
    }

    // MARK: Values

    private mutating func pathValue(_ type: ValueType) -> String {
        switch type {
        case .string: return maybeEncoded(randomText(forPath: true))
        default: return maybeEncoded(typedValue(type))
        }
    }

    private mutating func queryValue(_ type: ValueType) -> String {
        switch type {
        case .string: return maybeEncoded(randomText(forPath: false))
        default: return maybeEncoded(typedValue(type))
        }
    }

    private mutating func typedValue(_ type: ValueType) -> String {
        switch type {
        case .int:
            if rng.below(10) == 0 { return "0" }
            var s = String(1 + rng.below(9))
            for _ in 0..<rng.below(12) { s += String(rng.below(10)) }
            return s
        case .uuid:
            let hex = Array("0123456789abcdefABCDEF")
            var s = ""
            for i in 0..<32 {
                if i == 8 || i == 12 || i == 16 || i == 20 { s += "-" }
                s.append(hex[rng.below(hex.count)])
            }
            return s
        case .slug:
            let chars = Array("abcdefghijklmnopqrstuvwxyz0123456789-")
            return String((0...rng.below(20)).map { _ in chars[rng.below(chars.count)] })
        case .string: return randomText(forPath: true)
        case .oneOf(let values): return values[rng.below(values.count)]
        }
    }

    private static let textPieces: [String] = [
        "a", "b", "z", "K", "7", "-", "_", "~", ".", "!", "$", "'", "(", ")", "*", "+", ",", ";", "=", ":", "@",
        "ż", "ó", "ł", "é", "e\u{301}", "日本", "😀", "ß", "Ω", "%25", "%2B", "%3F", "%23", "%22", "%5B", "%7C",
    ]

    private static let plainWords = ["spring", "sale", "shoes", "summer", "newsletter", "push", "faq", "returns", "2026", "a1"]

    /// 1–12 pieces of text; no separators the position cannot hold, never `.` or `..`.
    private mutating func randomText(forPath: Bool) -> String {
        if style == .plain {
            return (0...rng.below(2)).map { _ in Self.plainWords[rng.below(Self.plainWords.count)] }.joined(separator: "-")
        }
        var s = ""
        for _ in 0...rng.below(12) { s += Self.textPieces[rng.below(Self.textPieces.count)] }
        if !forPath, rng.below(4) == 0 { s += pick(["/", "?", "%26", "%3D"]) }
        if s == "." || s == ".." { s += "x" }
        return s
    }

    /// The same text with some unreserved ASCII percent-encoded (upper or lower hex).
    private mutating func maybeEncoded(_ text: String) -> String {
        guard style == .varied, rng.below(4) == 0 else { return text }
        var out = ""
        var escapeDigitsLeft = 0  // leave existing %XX escapes alone
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let unreservedLetterOrDigit = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
            if scalar == "%" {
                escapeDigitsLeft = 2
                out += "%"
            } else if escapeDigitsLeft > 0 {
                escapeDigitsLeft -= 1
                out.unicodeScalars.append(scalar)
            } else if unreservedLetterOrDigit, rng.below(3) == 0 {
                let hex = String(v, radix: 16, uppercase: rng.below(2) == 0)
                out += "%" + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private mutating func mixedCase(_ text: String) -> String {
        if style == .plain { return text }
        switch rng.below(4) {
        case 0: return text.uppercased()
        case 1: return String(text.map { rng.below(2) == 0 ? Character($0.uppercased()) : $0 })
        default: return text
        }
    }

    private mutating func insert(_ choices: [String], into link: inout String) {
        let chars = Array(link)
        let at = rng.below(chars.count + 1)
        link = String(chars[..<at]) + pick(choices) + String(chars[at...])
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }
}

private extension String {
    /// Everything after `scheme:`.
    var afterScheme: Substring {
        guard let colon = firstIndex(of: ":") else { return self[...] }
        return self[index(after: colon)...]
    }

    /// `/path?query` of an https link (or the app-scheme rest, with a leading `/`).
    var pathAndQuery: String {
        guard let range = firstRange(of: "://") else { return "/" }
        let rest = self[range.upperBound...]
        if lowercased().hasPrefix("https:") {
            return rest.firstIndex(where: { $0 == "/" || $0 == "?" }).map { String(rest[$0...]) } ?? "/"
        }
        return "/" + rest
    }

    var pathPart: String { firstIndex(of: "?").map { String(self[..<$0]) } ?? self }
    var queryPart: String { firstIndex(of: "?").map { String(self[$0...]) } ?? "" }
}
