import StrictJSON

/// Numbers are relayed to the phone as written, so a number that a phone's JSON parser
/// (a double) cannot read as the sender meant is refused instead: one that overflows
/// or underflows a double, or an integer beyond ±2^53, where doubles stop being exact.
enum NumberSafety {
    /// Why `text` (a JSON number as written) is not safe to relay; nil when it is.
    static func problem(_ text: String) -> String? {
        guard let value = Double(text), value.isFinite else {
            return "\(text.prefix(64)) is beyond the range of a double"
        }
        let utf8 = text.utf8
        let isInteger = !utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") })
        if isInteger && !withinExactIntegers(text) {
            return "the integer \(text.prefix(64)) is beyond ±2^53 (9007199254740992), where a double loses digits"
        }
        if value == 0 {
            let mantissa = utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            if mantissa.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
                return "\(text.prefix(64)) underflows to 0 as a double"
            }
        }
        return nil
    }

    /// Compared on the digits: the nearest double to 2^53 + 1 is 2^53 itself.
    static func withinExactIntegers(_ text: String) -> Bool {
        let digits = text.utf8.drop { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "0") }
        if digits.count != 16 { return digits.count < 16 }
        return digits.lexicographicallyPrecedes("9007199254740993".utf8)
    }

    /// Reports every unsafe number inside `value`, with its pointer.
    static func check(_ value: JSON, at path: JSONPath, reader: inout ConfigReader) {
        switch value {
        case .number(let text):
            if let why = problem(text) { reader.problem(.unsafeNumber, at: path, why) }
        case .array(let items):
            for (i, item) in items.enumerated() { check(item, at: path.appending(index: i), reader: &reader) }
        case .object(let object):
            for member in object.members { check(member.value, at: path.appending(member.key), reader: &reader) }
        default:
            break
        }
    }
}
