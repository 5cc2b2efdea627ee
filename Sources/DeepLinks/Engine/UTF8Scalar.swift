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

    /// Offset of the first byte that does not start a valid UTF-8 sequence, or nil when
    /// all of `b` is UTF-8. ASCII is skipped eight bytes at a time.
    static func firstInvalidOffset(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = b.baseAddress else { return nil }
        var i = 0
        while i < b.count {
            while i + 8 <= b.count,
                  UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
            guard i < b.count else { break }
            if base[i] < 0x80 { i += 1; continue }
            guard let (_, length) = decodeMultibyte(b, at: i) else { return i }
            i += length
        }
        return nil
    }
}
