import DeepLinks
import StrictJSON

/// Reads typed members out of one JSON object, recording every wrong type or unknown
/// key as a problem instead of stopping at the first.
struct FieldReader {
    let object: JSONObject
    let path: JSONPath
    var problems: [PayloadError] = []

    init(_ object: JSONObject, at path: JSONPath) {
        self.object = object
        self.path = path
    }

    /// Records every member whose name is not in `known` (listed in this order).
    mutating func rejectUnknownKeys(_ known: [String]) {
        for member in object.members where !known.contains(member.key) {
            problems.append(PayloadError(.unknownKey, at: path.appending(member.key),
                                         Diagnostic.unknownKeyMessage(member.key, expected: known)))
        }
    }

    mutating func problem(_ code: PayloadErrorCode, _ key: String, _ message: String) {
        problems.append(PayloadError(code, at: path.appending(key), message))
    }

    mutating func wrongType(_ key: String, _ value: JSON, expected: String) {
        problem(.wrongType, key, "expected \(expected), found \(value.kindDescription)")
    }

    func has(_ key: String) -> Bool { object[key] != nil }

    mutating func string(_ key: String) -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let s) = value else { wrongType(key, value, expected: "a string"); return nil }
        return s
    }

    /// A string that must not be empty and must hold no control or invisible characters
    /// (it may end up in an HTTP header or on a lock screen).
    mutating func plainString(_ key: String) -> String? {
        guard let s = string(key) else { return nil }
        if s.isEmpty { problem(.invalidValue, key, "must not be empty"); return nil }
        if let bad = s.unicodeScalars.first(where: TextSafety.isUnsafe) {
            problem(.invalidValue, key, "contains the control or invisible character \(TextSafety.quoted(bad))")
            return nil
        }
        return s
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let b) = value else { wrongType(key, value, expected: "true or false"); return nil }
        return b
    }

    /// Apple writes these flags as 0/1; people write true/false. Both are accepted.
    mutating func flag(_ key: String) -> Bool? {
        guard let value = object[key] else { return nil }
        switch value {
        case .bool(let b): return b
        case .number("0"): return false
        case .number("1"): return true
        case .number:
            problem(.invalidValue, key, "expected true, false, 0 or 1, found \(Self.shown(value))")
            return nil
        default:
            wrongType(key, value, expected: "true, false, 0 or 1")
            return nil
        }
    }

    mutating func integer(_ key: String) -> Int64? {
        guard let value = object[key] else { return nil }
        guard case .number = value else { wrongType(key, value, expected: "an integer"); return nil }
        guard let n = value.int64Value else {
            problem(.invalidValue, key, "expected a whole number, found \(Self.shown(value))")
            return nil
        }
        return n
    }

    /// A number within 0…1, kept as written so it is sent exactly as given.
    mutating func unitInterval(_ key: String, code: PayloadErrorCode) -> String? {
        guard let value = object[key] else { return nil }
        guard case .number(let text) = value, let d = Double(text) else {
            wrongType(key, value, expected: "a number from 0 to 1")
            return nil
        }
        guard d >= 0 && d <= 1 else {
            problem(code, key, "must be from 0 to 1, found \(text.prefix(64))")
            return nil
        }
        if let why = NumberSafety.problem(text) {
            problem(.unsafeNumber, key, why)
            return nil
        }
        return text
    }

    mutating func object(_ key: String) -> JSONObject? {
        guard let value = object[key] else { return nil }
        guard case .object(let o) = value else { wrongType(key, value, expected: "an object"); return nil }
        return o
    }

    mutating func stringArray(_ key: String) -> [String]? {
        guard let value = object[key] else { return nil }
        guard case .array(let items) = value else { wrongType(key, value, expected: "an array of strings"); return nil }
        var out: [String] = []
        var ok = true
        for (i, item) in items.enumerated() {
            if case .string(let s) = item { out.append(s); continue }
            problems.append(PayloadError(.wrongType, at: path.appending(key).appending(index: i),
                                         "expected a string, found \(item.kindDescription)"))
            ok = false
        }
        return ok ? out : nil
    }

    /// `{"name": "value" | number, …}` for `{{placeholders}}`. Numbers keep their text.
    static func variables(_ value: JSON, at path: JSONPath, problems: inout [PayloadError]) -> [NamedValue] {
        guard case .object(let o) = value else {
            problems.append(PayloadError(.wrongType, at: path, "expected an object of names to strings, found \(value.kindDescription)"))
            return []
        }
        var out: [NamedValue] = []
        for member in o.members {
            switch member.value {
            case .string(let s): out.append(NamedValue(name: member.key, value: s))
            case .number(let n):
                if let why = NumberSafety.problem(n) {
                    problems.append(PayloadError(.unsafeNumber, at: path.appending(member.key), why))
                } else {
                    out.append(NamedValue(name: member.key, value: n))
                }
            default:
                problems.append(PayloadError(.wrongType, at: path.appending(member.key),
                                             "expected a string or a number, found \(member.value.kindDescription)"))
            }
        }
        return out
    }

    static func shown(_ value: JSON) -> String {
        switch value {
        case .number(let n): return n
        case .string(let s): return TextSafety.quoted(s)
        default: return value.kindDescription
        }
    }
}
