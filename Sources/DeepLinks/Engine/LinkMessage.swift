import StrictJSON

/// A refusal's message as it is composed: string interpolation appends straight to UTF-8
/// bytes (one buffer; numbers written as digits, quoted input escaped in place), so a
/// refused link costs no String until someone asks for `LinkRejection.message`, and a JSON
/// answer escapes the bytes directly. The text is exactly what the same interpolation into
/// a String gives.
struct LinkMessage: ExpressibleByStringInterpolation, Sendable, Equatable {
    var bytes: [UInt8]

    init(stringLiteral text: StaticString) {
        bytes = text.withUTF8Buffer { Array($0) }
    }

    init(stringInterpolation: StringInterpolation) {
        bytes = stringInterpolation.bytes
    }

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    struct StringInterpolation: StringInterpolationProtocol {
        var bytes: [UInt8] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            bytes.reserveCapacity(literalCapacity + 24 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: StaticString) {
            literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        mutating func appendInterpolation(_ text: String) {
            bytes.append(contentsOf: text.utf8)
        }

        mutating func appendInterpolation(_ message: LinkMessage) {
            bytes.append(contentsOf: message.bytes)
        }

        /// Decimal, as `"\(n)"` writes it.
        mutating func appendInterpolation(_ n: Int) {
            if n < 0 { bytes.append(UInt8(ascii: "-")) }
            var digits = 1
            var rest = n.magnitude
            while rest >= 10 { rest /= 10; digits += 1 }
            let end = bytes.count + digits
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
            bytes.withUnsafeMutableBufferPointer { out in
                var value = n.magnitude
                for i in stride(from: end - 1, through: end - digits, by: -1) {
                    out[i] = UInt8(ascii: "0") &+ UInt8(value % 10)
                    value /= 10
                }
            }
        }

        /// `value` in uppercase hex digits, at least `width` of them (`U+00A0`).
        mutating func appendInterpolation(uppercaseHex value: UInt32, width: Int) {
            var digits = 1
            while digits < 8 && value >> (4 * digits) != 0 { digits += 1 }
            for _ in digits..<max(width, digits) { bytes.append(UInt8(ascii: "0")) }
            for k in (0..<digits).reversed() { bytes.append(Hex.digit(UInt8(truncatingIfNeeded: value >> (4 * k)) & 0xF, uppercase: true)) }
        }

        /// Input quoted as `TextSafety.quoted` quotes it (printable ASCII copied between
        /// the quotes; anything else through `TextSafety` itself).
        mutating func appendInterpolation(_ text: QuotedBytes) {
            let plain = text.bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
            if plain {
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: text.bytes)
                bytes.append(UInt8(ascii: "\""))
            } else {
                bytes.append(contentsOf: TextSafety.quoted(String(decoding: text.bytes, as: UTF8.self)).utf8)
            }
        }
    }
}

/// Bytes a message quotes (`LinkScanner.quoted`): valid only while the message is composed.
struct QuotedBytes {
    let bytes: UnsafeBufferPointer<UInt8>
}
