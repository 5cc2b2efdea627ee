/// Hexadecimal digits, written one way for the whole program: digests, signatures, request
/// ids, `apns-id` suffixes, `\uXXXX` escapes, `%XX` percent-escapes and `U+XXXX` names.
///
/// Self-contained (standard library only): the generated Swift router embeds this file
/// with the canonicaliser (see docs/codegen.md).
public enum Hex {
    /// The ASCII digit for a nibble (0...15): `0-9a-f`, or `0-9A-F` when `uppercase`.
    @inlinable @inline(__always)
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : (uppercase ? 0x37 : 0x57) &+ nibble
    }

    /// Whether every byte is a lowercase hex digit (`0-9a-f`). Eight bytes at a time (a
    /// device token is checked once or twice per device): in a word of ASCII bytes,
    /// adding `0x80 - k` to each byte sets its top bit exactly when the byte is at least
    /// `k`, and no byte carries into the next.
    @inlinable
    public static func isLowercaseDigits(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080
        func atLeast(_ word: UInt64, _ k: UInt64) -> UInt64 { (word &+ (0x80 &- k) &* 0x0101_0101_0101_0101) & high }
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                guard word & high == 0 else { return false }
                let digit = atLeast(word, 0x30) & ~atLeast(word, 0x3A)
                let letter = atLeast(word, 0x61) & ~atLeast(word, 0x67)
                guard digit | letter == high else { return false }
                i += 8
            }
        }
        while i < bytes.count {
            let byte = bytes[i]
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
            i += 1
        }
        return true
    }

    /// Each byte as two digits, in order (`[0xAB, 0x01]` → `ab01`). Written straight into
    /// the string's storage when the bytes are contiguous (a device token per claimed
    /// device: one allocation, not three).
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        if let direct = bytes.withContiguousStorageIfAvailable({ buffer in
            String(unsafeUninitializedCapacity: buffer.count * 2) { out in
                guard let to = out.baseAddress, let from = buffer.baseAddress else { return 0 }
                for i in 0..<buffer.count {
                    to[2 &* i] = digit(from[i] >> 4, uppercase: uppercase)
                    to[2 &* i &+ 1] = digit(from[i] & 0xF, uppercase: uppercase)
                }
                return buffer.count * 2
            }
        }) { return direct }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4, uppercase: uppercase))
            out.append(digit(byte & 0xF, uppercase: uppercase))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in hex, zero-padded to at least `width` digits (`padded(0x2a, width: 4)` is
    /// `002a`), after `prefix` (`padded(0x2a, width: 4, after: "id-")` is `id-002a`): one
    /// allocation (an apns-id per claimed device).
    public static func padded(_ value: UInt64, width: Int, uppercase: Bool = false, after prefix: String = "") -> String {
        var digits = 1
        while digits < 16 && value >> (4 * digits) != 0 { digits += 1 }
        digits = max(digits, width)
        var prefix = prefix
        let start = prefix.utf8.count
        return prefix.withUTF8 { head in
            String(unsafeUninitializedCapacity: start + digits) { out in
                guard let to = out.baseAddress else { return 0 }
                if let from = head.baseAddress { UnsafeMutableRawPointer(to).copyMemory(from: from, byteCount: start) }
                var rest = value
                var i = start + digits
                while i > start {
                    i -= 1
                    to[i] = digit(UInt8(truncatingIfNeeded: rest & 0xF), uppercase: uppercase)
                    rest >>= 4
                }
                return start + digits
            }
        }
    }

    /// Appends `%XX` for `byte`, uppercase as RFC 3986 §2.1 recommends.
    @inlinable @inline(__always)
    public static func appendPercentEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(0x25)
        out.append(digit(byte >> 4, uppercase: true))
        out.append(digit(byte & 0xF, uppercase: true))
    }
}
