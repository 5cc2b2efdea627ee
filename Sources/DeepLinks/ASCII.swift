#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// Minimal strict UTF-8 decoding over bytes (no overlongs, no surrogates, ≤ U+10FFFF).
enum UTF8Scalar {
    /// The scalar starting at `i` and its length in bytes, or nil if the bytes there are
    /// not valid UTF-8.
    @inline(__always)
    static func decode(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> (Unicode.Scalar, Int)? {
        let c0 = b[i]
        if c0 < 0x80 { return (Unicode.Scalar(c0), 1) }
        return decodeMultibyte(b, at: i)
    }

    static func decodeMultibyte(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> (Unicode.Scalar, Int)? {
        let c0 = b[i]
        let length: Int
        var value: UInt32
        var minimum: UInt32
        switch c0 {
        case 0xC2...0xDF: length = 2; value = UInt32(c0 & 0x1F); minimum = 0x80
        case 0xE0...0xEF: length = 3; value = UInt32(c0 & 0x0F); minimum = 0x800
        case 0xF0...0xF4: length = 4; value = UInt32(c0 & 0x07); minimum = 0x10000
        default: return nil
        }
        guard i + length <= b.count else { return nil }
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(c & 0x3F)
        }
        guard value >= minimum, value <= 0x10FFFF, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}

/// Byte-string equality without generic sequence iteration (hot in matching).
enum Bytes {
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return false }
        return memcmp(pa, pb, a.count) == 0
    }

    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { equal($0, b) }
    }
}
