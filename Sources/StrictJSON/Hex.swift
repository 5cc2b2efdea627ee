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

    /// Each byte as two digits, in order (`[0xAB, 0x01]` → `ab01`).
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4, uppercase: uppercase))
            out.append(digit(byte & 0xF, uppercase: uppercase))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in hex, zero-padded to at least `width` digits (`padded(0x2a, width: 4)` is
    /// `002a`).
    public static func padded(_ value: UInt64, width: Int, uppercase: Bool = false) -> String {
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(digit(UInt8(truncatingIfNeeded: rest & 0xF), uppercase: uppercase))
            rest >>= 4
        } while rest != 0
        while digits.count < width { digits.append(0x30) }
        return String(decoding: digits.reversed(), as: UTF8.self)
    }

    /// Appends `%XX` for `byte`, uppercase as RFC 3986 §2.1 recommends.
    @inlinable @inline(__always)
    public static func appendPercentEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(0x25)
        out.append(digit(byte >> 4, uppercase: true))
        out.append(digit(byte & 0xF, uppercase: true))
    }
}
