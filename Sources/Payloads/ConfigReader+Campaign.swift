import DeepLinks
import StrictJSON

/// The value rules campaigns and templates add to the one document reader.
extension ConfigReader {
    /// A campaign's or template's problem at `path`.
    mutating func problem(_ code: PayloadErrorCode, at path: JSONPath, _ message: String) {
        report(code.diagnosticCode, at: path, message)
    }

    mutating func wrongType(_ value: JSON, at path: JSONPath, expected: String) {
        report(.wrongType, at: path, "expected \(expected), found \(value.kindDescription)")
    }

    /// Every problem recorded, as campaign problems (the reader's codes are all campaign
    /// codes).
    var payloadErrors: [PayloadError] {
        diagnostics.map { PayloadError(PayloadErrorCode(rawValue: $0.code.rawValue) ?? .invalidValue, at: $0.location.path ?? .root, $0.message) }
    }

    /// A string member that must not be empty and must hold no control or invisible
    /// characters (it may end up in an HTTP header or on a lock screen).
    mutating func plainString(_ object: JSONObject, _ key: String, at section: JSONPath) -> String? {
        string(object, key, at: section, validate: Self.plainTextProblem)?.value
    }

    /// Why `text` is not plain text (OpenAPI's `PlainText`): empty, or a control or
    /// invisible character; nil when it is.
    static func plainTextProblem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if let bad = text.unicodeScalars.first(where: TextSafety.isUnsafe) {
            return "contains the control or invisible character \(TextSafety.quoted(bad))"
        }
        return nil
    }

    /// Apple writes these flags as 0/1; people write true/false. Both are accepted.
    mutating func flag(_ object: JSONObject, _ key: String, at section: JSONPath) -> Bool? {
        guard let value = object[key] else { return nil }
        switch value {
        case .bool(let b): return b
        case .number("0"): return false
        case .number("1"): return true
        case .number:
            problem(.invalidValue, at: section.appending(key), "expected true, false, 0 or 1, found \(Self.shown(value))")
            return nil
        default:
            wrongType(value, at: section.appending(key), expected: "true, false, 0 or 1")
            return nil
        }
    }

    /// A whole number as written in a campaign (any size a 64-bit integer holds; the
    /// caller checks the range the member allows).
    mutating func wholeNumber(_ object: JSONObject, _ key: String, at section: JSONPath) -> Int64? {
        guard let value = object[key] else { return nil }
        guard case .number = value else { wrongType(value, at: section.appending(key), expected: "an integer"); return nil }
        guard let n = value.int64Value else {
            problem(.invalidValue, at: section.appending(key), "expected a whole number, found \(Self.shown(value))")
            return nil
        }
        return n
    }

    /// A number within 0…1, kept as written so it is sent exactly as given.
    mutating func unitInterval(_ object: JSONObject, _ key: String, at section: JSONPath, code: PayloadErrorCode) -> String? {
        guard let value = object[key] else { return nil }
        let path = section.appending(key)
        guard case .number(let text) = value, let d = Double(text) else {
            wrongType(value, at: path, expected: "a number from 0 to 1")
            return nil
        }
        guard d >= 0 && d <= 1 else {
            problem(code, at: path, "must be from 0 to 1, found \(text.prefix(64))")
            return nil
        }
        if let why = NumberSafety.problem(text) {
            problem(.unsafeNumber, at: path, why)
            return nil
        }
        return text
    }

    /// `{"name": "value" | number, …}` for `{{placeholders}}`. Numbers keep their text.
    mutating func variables(_ value: JSON, at path: JSONPath) -> [NamedValue] {
        guard case .object(let o) = value else {
            wrongType(value, at: path, expected: "an object of names to strings")
            return []
        }
        var out: [NamedValue] = []
        for member in o.members {
            switch member.value {
            case .string(let s): out.append(NamedValue(name: member.key, value: s))
            case .number(let n):
                if let why = NumberSafety.problem(n) {
                    problem(.unsafeNumber, at: path.appending(member.key), why)
                } else {
                    out.append(NamedValue(name: member.key, value: n))
                }
            default:
                wrongType(member.value, at: path.appending(member.key), expected: "a string or a number")
            }
        }
        return out
    }

    /// A value as a message shows it: a number as written, a string quoted.
    static func shown(_ value: JSON) -> String {
        switch value {
        case .number(let n): return n
        case .string(let s): return TextSafety.quoted(s)
        default: return value.kindDescription
        }
    }
}
