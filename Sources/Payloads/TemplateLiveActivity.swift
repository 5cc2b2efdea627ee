import StrictJSON

/// A template's `live_activity` section: the Live Activity content it produces, with
/// `{{placeholders}}` in string values filled from each device's (or the campaign's)
/// variables. A campaign using the template says only the event:
///
/// ```json
/// "live_activity": {
///   "content_state": {"status": "{{status}}", "eta_minutes": "{{eta}}", "driver": {"name": "{{driver}}"}},
///   "numbers": ["eta"],
///   "attributes_type": "DeliveryAttributes",
///   "attributes": {"order": "{{order_id}}"}
/// }
/// ```
/// A string that is exactly one placeholder named in `numbers` becomes a JSON number:
/// each device's value must be one (checked before anything is sent).
public struct TemplateLiveActivity: Sendable, Equatable {
    /// A JSON value whose strings may hold placeholders.
    public indirect enum Value: Sendable, Equatable {
        case constant(JSON)
        case text(TemplateText)
        /// A placeholder whose value is written as a JSON number.
        case number(String)
        case object([(key: String, value: Value)])
        case array([Value])

        public static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.constant(let x), .constant(let y)): return x == y
            case (.text(let x), .text(let y)): return x == y
            case (.number(let x), .number(let y)): return x == y
            case (.array(let x), .array(let y)): return x == y
            case (.object(let x), .object(let y)):
                return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }

        /// Placeholder names in order of first use.
        var variableNames: [String] {
            var names: [String] = []
            func walk(_ v: Value) {
                switch v {
                case .constant: break
                case .text(let t): for n in t.variableNames where !names.contains(n) { names.append(n) }
                case .number(let n): if !names.contains(n) { names.append(n) }
                case .object(let members): members.forEach { walk($0.value) }
                case .array(let items): items.forEach(walk)
                }
            }
            walk(self)
            return names
        }
    }

    public var contentState: Value
    public var attributesType: String?
    public var attributes: Value?
    /// Placeholders written as numbers.
    public var numbers: [String]

    static let keys = ["content_state", "numbers", "attributes_type", "attributes"]

    /// Every placeholder the content and attributes use.
    public var variableNames: [String] {
        var names = contentState.variableNames
        for n in attributes?.variableNames ?? [] where !names.contains(n) { names.append(n) }
        return names
    }

    /// Reads the section of a template file; problems go to `r`.
    static func read(_ value: JSON, at path: JSONPath, _ r: inout ConfigReader) -> TemplateLiveActivity? {
        guard case .object(let object) = value else {
            r.wrongType(value, at: path, expected: "an object with the Live Activity's content_state")
            return nil
        }
        r.rejectUnknownKeys(object, at: path, keys: keys)
        var numbers: [String] = []
        if let list = object["numbers"] {
            let here = path.appending("numbers")
            if case .array(let items) = list {
                for (i, item) in items.enumerated() {
                    if case .string(let name) = item, TemplateText.isName(Substring(name)) {
                        if numbers.contains(name) {
                            r.problem(.invalidTemplate, at: here.appending(index: i), "\(TextSafety.quoted(name)) is listed twice")
                        }
                        numbers.append(name)
                    } else {
                        r.problem(.invalidTemplate, at: here.appending(index: i), "expected a placeholder name (letters, digits and '_'), found \(ConfigReader.shown(item))")
                    }
                }
            } else {
                r.wrongType(list, at: here, expected: "a list of placeholder names written as numbers")
            }
        }
        var state: Value?
        if let s = object["content_state"] {
            if case .object = s { state = compile(s, at: path.appending("content_state"), numbers: numbers, &r) } else {
                r.wrongType(s, at: path.appending("content_state"), expected: "an object (the app's Activity.ContentState)")
            }
        } else {
            r.problem(.missing, at: path.appending("content_state"), "missing: the content the template produces (the app's Activity.ContentState)")
        }
        var attributesType: String?
        if let type = r.plainString(object, "attributes_type", at: path) {
            if LiveActivity.isSwiftTypeName(type) { attributesType = type } else {
                r.problem(.invalidValue, at: path.appending("attributes_type"), "expected the name of the app's ActivityAttributes type (a Swift identifier, at most 256 bytes), not \(TextSafety.quoted(type))")
            }
        }
        var attributes: Value?
        if let a = object["attributes"] {
            if case .object = a { attributes = compile(a, at: path.appending("attributes"), numbers: numbers, &r) } else {
                r.wrongType(a, at: path.appending("attributes"), expected: "an object (the activity's static attributes)")
            }
        }
        guard let state else { return nil }
        let activity = TemplateLiveActivity(contentState: state, attributesType: attributesType, attributes: attributes, numbers: numbers)
        let used = activity.variableNames
        for (i, name) in numbers.enumerated() where !used.contains(name) {
            r.problem(.invalidTemplate, at: path.appending("numbers").appending(index: i),
                      "\(TextSafety.quoted(name)) is listed as a number but no value is exactly \"{{\(name)}}\"")
        }
        return activity
    }

    /// Strings become texts; a string that is only a placeholder listed in `numbers`
    /// becomes a number hole; numbers must be safe to relay.
    static func compile(_ json: JSON, at path: JSONPath, numbers: [String], _ r: inout ConfigReader) -> Value {
        switch json {
        case .string(let s):
            switch TemplateText.parse(s) {
            case .success(let text):
                if text.pieces.count == 1, case .variable(let name) = text.pieces[0], numbers.contains(name) { return .number(name) }
                for name in numbers where text.variableNames.contains(name) {
                    r.problem(.invalidTemplate, at: path, "\(TextSafety.quoted(name)) is a number: the value must be exactly \"{{\(name)}}\", not text around it")
                }
                return text.variableNames.isEmpty ? .constant(json) : .text(text)
            case .failure(let why):
                r.problem(.invalidTemplate, at: path, why.message)
                return .constant(json)
            }
        case .number(let text):
            if let why = NumberSafety.problem(text) { r.problem(.unsafeNumber, at: path, why) }
            return .constant(json)
        case .object(let object):
            return .object(object.members.map { ($0.key, compile($0.value, at: path.appending($0.key), numbers: numbers, &r)) })
        case .array(let items):
            return .array(items.enumerated().map { compile($1, at: path.appending(index: $0), numbers: numbers, &r) })
        case .null, .bool:
            return .constant(json)
        }
    }
}

/// The check on a value a template writes as a JSON number.
enum TemplateNumbers {
    /// Why `value` cannot be written as a JSON number; nil when it can.
    static func problem(_ value: String) -> String? {
        guard case .number(let text)? = try? JSONParser().parse(Array(value.utf8)), text == value else {
            return "expected a JSON number like 12 or 4.5, found \(TextSafety.quoted(value))"
        }
        return NumberSafety.problem(text)
    }
}
