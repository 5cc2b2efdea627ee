/// Byte classes used by the scanner and the table loader (RFC 3986 §2).
enum ASCII {
    @inline(__always)
    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    @inline(__always)
    static func isAlpha(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~"
    @inline(__always)
    static func isUnreserved(_ c: UInt8) -> Bool {
        isAlpha(c) || isDigit(c) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
    }

    @inline(__always)
    static func lowercased(_ c: UInt8) -> UInt8 {
        (c >= 0x41 && c <= 0x5A) ? c | 0x20 : c
    }

    static func isUnreservedText(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy(isUnreserved)
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`
    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first, isAlpha(first) || first == 0x5F else { return false }
        return s.utf8.allSatisfy { isAlpha($0) || isDigit($0) || $0 == 0x5F }
    }
}

/// Byte-string equality without generic sequence iteration (hot in matching).
enum Bytes {
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { equal($0, b) }
    }
}

/// Tests on eight bytes at once, a little-endian word (the usual bit tricks). Each gives
/// the high bit of every byte that passes; `inRange` and `equal` are exact for words of
/// ASCII bytes (no high bit set: adding a constant to a byte then never carries).
enum ByteWord {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let high: UInt64 = 0x8080_8080_8080_8080

    /// Bytes in `lower..<lower + n` (ASCII words).
    @inline(__always)
    static func inRange(_ w: UInt64, _ lower: UInt64, _ n: UInt64) -> UInt64 {
        (w &+ ones &* (0x80 - lower)) & ~(w &+ ones &* (0x80 - lower - n)) & high
    }

    /// Bytes equal to `byte` (ASCII words).
    @inline(__always)
    static func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
        let x = w ^ (ones &* UInt64(byte))
        return ~(x &+ ones &* 0x7F) & high
    }

    /// True when some byte of `w` (any word) equals `byte`.
    @inline(__always)
    static func contains(_ w: UInt64, _ byte: UInt8) -> Bool {
        let x = w ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & high != 0
    }

    /// `w` when all eight bytes are RFC 3986 unreserved (`A-Z a-z 0-9 - . _ ~`), with the
    /// letters lowercased when `lowercasing`; nil otherwise.
    @inline(__always)
    static func unreserved(_ w: UInt64, lowercasing: Bool) -> UInt64? {
        if w & high != 0 { return nil }
        let upper = inRange(w, 0x41, 26)
        let passing = upper | inRange(w, 0x61, 26) | inRange(w, 0x30, 10)
            | equal(w, UInt8(ascii: "-")) | equal(w, UInt8(ascii: ".")) | equal(w, UInt8(ascii: "_")) | equal(w, UInt8(ascii: "~"))
        if passing != high { return nil }
        return lowercasing ? w | upper >> 2 : w  // 0x80 >> 2 is the case bit
    }
}
