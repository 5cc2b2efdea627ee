/// A parsed JSON document that keeps what the text said: object members in their
/// written order and numbers as their literal text, so that nothing is guessed at or
/// reordered (route tables and templates depend on declaration order).
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number exactly as written (already checked against RFC 8259's grammar).
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// A short noun for messages: "a string", "an object", …
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The number as an exact integer, if it is written as one (no fraction, no
    /// exponent) and fits in 64 bits.
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }

    /// The number as a Double (may round).
    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSON
    public init(key: String, value: JSON) {
        self.key = key
        self.value = value
    }
}

/// A JSON object with its members in written order. Duplicate keys never get this far:
/// the parser rejects them.
public struct JSONObject: Sendable, Equatable {
    public var members: [JSONMember]

    public init(_ members: [JSONMember] = []) {
        self.members = members
    }

    public subscript(key: String) -> JSON? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    public var keys: [String] { members.map(\.key) }
    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }
}

/// Where a value sits in a document: renders both as a readable path
/// (`devices[17].variables.name`) and as an RFC 6901 JSON pointer
/// (`/devices/17/variables/name`).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) {
        self.components = components
    }

    public static let root = JSONPath()

    public func appending(_ key: String) -> JSONPath {
        JSONPath(components + [.key(key)])
    }

    public func appending(index: Int) -> JSONPath {
        JSONPath(components + [.index(index)])
    }

    /// `devices[17].variables.name`; `$` for the document itself. Keys that are not
    /// plain identifiers are quoted and escaped (`data["a.b"]`).
    public var description: String {
        if components.isEmpty { return "$" }
        var out = ""
        for component in components {
            switch component {
            case .index(let i):
                out += "[\(i)]"
            case .key(let k):
                if Self.isPlainIdentifier(k) {
                    if !out.isEmpty { out += "." }
                    out += k
                } else {
                    out += "[" + JSONWriter.quoted(k) + "]"
                }
            }
        }
        return out
    }

    /// RFC 6901 pointer: `~` → `~0`, `/` → `~1`; empty string for the root.
    public var pointer: String {
        var out = ""
        for component in components {
            out += "/"
            switch component {
            case .index(let i): out += String(i)
            case .key(let k):
                out += k.replacingAll("~", with: "~0").replacingAll("/", with: "~1")
            }
        }
        return out
    }

    private static func isPlainIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
        return s.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
                || b == 0x5F || b == 0x2D
        }
    }
}

extension String {
    /// Plain substring replacement without Foundation.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, self.contains(target) else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}
