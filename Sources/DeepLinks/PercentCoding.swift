import StrictJSON

/// Percent-decoding (exactly once) and the canonical re-encoding.
enum PercentCoding {
    /// Decodes from `input[from]` up to `limit` or the first `stop` or `alsoStop` byte,
    /// writing into `out` from `start`. Returns where the raw text ended and where the
    /// decoded bytes end. Throws `invalidPercentEncoding` for `%` not followed by two hex
    /// digits.
    @inline(__always)
    static func decode(_ input: UnsafeBufferPointer<UInt8>, from: Int, limit: Int, stop: UInt8, alsoStop: UInt8,
                       into out: UnsafeMutableBufferPointer<UInt8>, at start: Int,
                       what: @autoclosure () -> String) throws(LinkRejection) -> (rawEnd: Int, decodedEnd: Int) {
        var o = start
        var i = from
        while i < limit {
            let c = input[i]
            if c == stop || c == alsoStop { break }
            if c == UInt8(ascii: "%") {
                guard i + 2 < limit, let hi = ASCII.hexValue(input[i + 1]), let lo = ASCII.hexValue(input[i + 2]) else {
                    throw LinkRejection(code: .invalidPercentEncoding,
                                        message: "\(what()): '%' at byte offset \(i) is not followed by two hex digits")
                }
                out[o] = hi << 4 | lo
                i += 3
            } else {
                out[o] = c
                i += 1
            }
            o += 1
        }
        return (i, o)
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                       into out: UnsafeMutableBufferPointer<UInt8>, at start: Int,
                       what: @autoclosure () -> String) throws(LinkRejection) -> Int {
        try decode(input, from: range.lowerBound, limit: range.upperBound, stop: 0, alsoStop: 0,
                   into: out, at: start, what: what()).decodedEnd
    }

    /// Checks decoded bytes: valid UTF-8, and no character a link may not carry.
    static func checkDecoded(_ bytes: UnsafeBufferPointer<UInt8>, what: @autoclosure () -> String) throws(LinkRejection) {
        var i = 0
        while i < bytes.count {
            guard let (scalar, length) = UTF8Scalar.decode(bytes, at: i) else {
                throw LinkRejection(code: .invalidPercentEncoding,
                                    message: "\(what()) is not valid UTF-8 after percent-decoding")
            }
            if ForbiddenCharacters.contains(scalar) {
                throw LinkRejection(code: .forbiddenCharacter,
                                    message: "\(what()) contains \(CharacterNames.describe(scalar)) after percent-decoding")
            }
            i += length
        }
    }

    /// Characters a canonical path segment carries unencoded: RFC 3986 pchar minus `;`
    /// (old `NSURL` splits path parameters at `;`).
    static let pathSafe: [Bool] = table(extra: "!$&'()*+,=:@")
    /// Characters a canonical query key or value carries unencoded. Not `&`, `=`, `;`
    /// (separators) and not `+` (form decoders read it as a space).
    static let querySafe: [Bool] = table(extra: "!$'()*,/:?@")

    private static func table(extra: String) -> [Bool] {
        var t = [Bool](repeating: false, count: 256)
        for c in 0..<128 where ASCII.isUnreserved(UInt8(c)) { t[c] = true }
        for c in extra.utf8 { t[Int(c)] = true }
        return t
    }

    @inline(__always)
    private static func hexDigit(_ d: UInt8) -> UInt8 { d < 10 ? 0x30 + d : 0x37 + d }

    /// Appends `bytes` percent-encoding everything not in `safe` (uppercase hex).
    @inline(__always)
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, safe: UnsafeBufferPointer<Bool>,
                       lowercasing: Bool = false, into out: inout CanonicalWriter) {
        for raw in bytes {
            let c = lowercasing ? ASCII.lowercased(raw) : raw
            if safe[Int(c)] {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(c >> 4))
                out.append(hexDigit(c & 0x0F))
            }
        }
    }
}

/// A bounded byte writer over caller-provided memory.
struct CanonicalWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    @inline(__always)
    mutating func append(_ c: UInt8) {
        buffer[count] = c
        count += 1
    }

    mutating func append(_ bytes: [UInt8]) {
        for c in bytes { append(c) }
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        for c in bytes { append(c) }
    }

    mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { append($0) }
    }
}

/// Names for characters in messages: `U+202E (bidi control)`.
enum CharacterNames {
    static func describe(_ scalar: Unicode.Scalar) -> String {
        var hex = String(scalar.value, radix: 16, uppercase: true)
        while hex.utf8.count < 4 { hex = "0" + hex }
        return "U+\(hex) (\(kind(scalar)))"
    }

    static func kind(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x20, 0x09...0x0D: return "whitespace"
        case 0x00...0x1F, 0x7F...0x9F: return "control character"
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return "bidi control"
        case 0x200B...0x200D, 0x2060, 0xFEFF: return "zero-width character"
        case 0x2028, 0x2029: return "line separator"
        default:
            return TextSafety.isWhitespace(scalar) ? "whitespace" : "format character"
        }
    }
}
