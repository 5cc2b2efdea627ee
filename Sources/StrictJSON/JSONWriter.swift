/// Writes compact JSON into a byte buffer, in exactly the order it is told (so output is
/// deterministic). Strings are escaped for safety as well as validity: every character
/// `TextSafety.isUnsafe` names is written as `\uXXXX`.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func rawBytes(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func byte(_ b: UInt8) {
        bytes.append(b)
    }

    public mutating func string(_ value: String) {
        Self.appendQuoted(value, to: &bytes)
    }

    public mutating func int(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    public mutating func null() {
        raw("null")
    }

    /// Writes a whole JSON value, members in their stored order.
    public mutating func value(_ json: JSON) {
        switch json {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let text): rawBytes(text)
        case .string(let s): string(s)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                value(item)
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                string(member.key)
                byte(UInt8(ascii: ":"))
                value(member.value)
            }
            byte(UInt8(ascii: "}"))
        }
    }

    /// `"text"` with JSON and safety escapes, as a String.
    public static func quoted(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// One JSON value as compact text.
    public static func serialize(_ json: JSON) -> String {
        var w = JSONWriter()
        w.value(json)
        return w.string
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// The inside of a JSON string: `value` escaped exactly as `appendQuoted` does, without
    /// the quotes (for writers that build one string value from several pieces).
    public static func appendEscaped(_ value: String, to out: inout [UInt8]) {
        var needsSlowPath = false
        for b in value.utf8 where b < 0x20 || b == 0x22 || b == 0x5C || b >= 0x7F {
            needsSlowPath = true
            break
        }
        if !needsSlowPath {
            out.append(contentsOf: value.utf8)
            return
        }
        for scalar in value.unicodeScalars {
            let v = scalar.value
            switch v {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            default:
                if TextSafety.isUnsafe(scalar) {
                    appendUnicodeEscape(scalar, to: &out)
                } else if v < 0x80 {
                    out.append(UInt8(v))
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
    }

    static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        func unit(_ u: UInt32) {
            out.append(0x5C)
            out.append(UInt8(ascii: "u"))
            out.append(hexDigits[Int((u >> 12) & 0xF)])
            out.append(hexDigits[Int((u >> 8) & 0xF)])
            out.append(hexDigits[Int((u >> 4) & 0xF)])
            out.append(hexDigits[Int(u & 0xF)])
        }
        let v = scalar.value
        if v > 0xFFFF {
            let x = v - 0x10000
            unit(0xD800 + (x >> 10))
            unit(0xDC00 + (x & 0x3FF))
        } else {
            unit(v)
        }
    }

    static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to out: inout String) {
        var bytes: [UInt8] = []
        appendUnicodeEscape(scalar, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}
