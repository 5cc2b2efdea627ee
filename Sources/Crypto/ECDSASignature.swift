/// OpenSSL signs ECDSA as DER `SEQUENCE { INTEGER r, INTEGER s }`; JWS ES256 wants the
/// raw 64 bytes r‖s, each half big-endian and left-padded to 32 bytes (RFC 7518 §3.4).
/// Parsed strictly here rather than trusted, so a malformed signature is an error, not
/// a token APNs rejects later.
public enum ECDSASignature {
    public struct FormatError: Error, Sendable, Equatable {
        public let message: String
    }

    public static func rawFromDER(_ der: [UInt8], halfLength: Int = 32) throws(FormatError) -> [UInt8] {
        var reader = DERReader(bytes: der)
        let sequenceLength = try reader.header(tag: 0x30)
        guard sequenceLength == der.count - reader.position else {
            throw FormatError(message: "signature SEQUENCE length does not match its content")
        }
        let r = try reader.unsignedInteger()
        let s = try reader.unsignedInteger()
        guard reader.position == der.count else { throw FormatError(message: "trailing bytes after signature") }
        return try leftPadded(r, to: halfLength) + leftPadded(s, to: halfLength)
    }

    private static func leftPadded(_ value: ArraySlice<UInt8>, to length: Int) throws(FormatError) -> [UInt8] {
        guard value.count <= length else { throw FormatError(message: "signature component longer than \(length) bytes") }
        return [UInt8](repeating: 0, count: length - value.count) + value
    }

    private struct DERReader {
        let bytes: [UInt8]
        var position = 0

        mutating func byte() throws(FormatError) -> UInt8 {
            guard position < bytes.count else { throw FormatError(message: "signature truncated") }
            defer { position += 1 }
            return bytes[position]
        }

        /// Reads a tag and a definite length (short or long form, at most 2 length bytes).
        mutating func header(tag expected: UInt8) throws(FormatError) -> Int {
            let tag = try byte()
            guard tag == expected else { throw FormatError(message: "expected DER tag \(expected), found \(tag)") }
            let first = try byte()
            if first < 0x80 { return Int(first) }
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 2 else { throw FormatError(message: "unsupported DER length form") }
            var length = 0
            for _ in 0..<count { length = length << 8 | Int(try byte()) }
            return length
        }

        /// A DER INTEGER that must be positive; returns its magnitude without leading zeros.
        mutating func unsignedInteger() throws(FormatError) -> ArraySlice<UInt8> {
            let length = try header(tag: 0x02)
            guard length >= 1, position + length <= bytes.count else { throw FormatError(message: "bad INTEGER length") }
            var value = bytes[position..<position + length]
            position += length
            guard value.first.map({ $0 & 0x80 == 0 }) ?? false else { throw FormatError(message: "negative INTEGER") }
            while value.count > 1, value.first == 0 { value = value.dropFirst() }
            if value == [0] { throw FormatError(message: "zero INTEGER") }
            return value
        }
    }
}
