import StrictJSON

/// Percent-encoding for path text written into patterns and sample URLs, and lenient
/// decoding for comparing URL text the way `percentEncoded: false` asks.
enum AASAPercentEncoding {
    /// Everything but RFC 3986 unreserved characters and the sub-delimiters a path keeps
    /// raw is encoded; `*` and `?` always are, being wildcards in Apple's patterns.
    static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isKept(byte) { out.append(byte) } else { Hex.appendPercentEscape(byte, to: &out) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isKept(_ b: UInt8) -> Bool {
        ASCII.isUnreserved(b) || "!$&'()+,;=:@".utf8.contains(b)
    }

    /// `%XX` decoded to bytes, read as UTF-8; text that does not decode to valid UTF-8
    /// (or has a broken escape) is returned as written: matching never fails on it.
    static func decode(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var rest = Array(text.utf8)[...]
        while let b = rest.popFirst() {
            guard b == UInt8(ascii: "%") else { bytes.append(b); continue }
            guard rest.count >= 2, let hi = ASCII.hexValue(rest[rest.startIndex]),
                  let lo = ASCII.hexValue(rest[rest.startIndex + 1]) else { return text }
            bytes.append(hi << 4 | lo)
            rest = rest.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }
}
