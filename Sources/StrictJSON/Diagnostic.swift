/// One problem, said the same way everywhere: a stable code, where it is, and a message
/// that quotes input only escaped. The CLI prints `place: message [code]`, the HTTP API
/// renders it inside an RFC 9457 problem, metrics count its code.
public struct Diagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: DiagnosticCode
    public var location: DiagnosticLocation
    public var message: String

    public init(_ code: DiagnosticCode, at location: DiagnosticLocation, _ message: String) {
        self.code = code
        self.location = location
        self.message = message
    }

    /// `place: message [code]`, or `message [code]` when the problem has no place.
    public var description: String {
        let place = location.place
        return place.isEmpty ? "\(message) [\(code)]" : "\(place): \(message) [\(code)]"
    }
}

/// A stable identifier for one kind of problem, the same on every endpoint and command.
/// Known codes are declared by the module that decides them (`DiagnosticCode.unknownKey`,
/// `.hostNotAllowed`, …) and listed in a `DiagnosticDomain`; any other string is kept as
/// it is (a code read back from storage, say), never lost or rewritten.
public struct DiagnosticCode: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (a: DiagnosticCode, b: DiagnosticCode) -> Bool { a.rawValue < b.rawValue }
}

/// The codes one part of the program decides, as docs/errors.md groups them.
public struct DiagnosticDomain: Sendable {
    public let name: String
    public let codes: [DiagnosticCode]

    public init(_ name: String, _ codes: [DiagnosticCode]) {
        self.name = name
        self.codes = codes
    }
}

/// Where a problem is. Each kind is its own case so that nothing has to be parsed back out
/// of a string (`?limit`, `header:…`, `line:17` were five syntaxes for one idea).
public enum DiagnosticLocation: Sendable, Hashable {
    /// Nowhere in particular (a whole request, a whole run).
    case none
    /// An RFC 6901 JSON pointer into a request body or a document given on the command line.
    case pointer(JSONPath)
    /// A file, and the place in it (the root for the file as a whole).
    case file(String, at: JSONPath)
    /// A line of a line-oriented input (1-based), in a file when one is named.
    case line(Int, file: String?)
    /// A query or path parameter of an HTTP request.
    case parameter(String)
    /// An HTTP request header.
    case header(String)
    /// An environment variable.
    case environment(String)
    /// A command-line option (`--listen`).
    case option(String)

    /// The JSON pointer when the location is one (a body or a file).
    public var path: JSONPath? {
        switch self {
        case .pointer(let path), .file(_, let path): return path
        default: return nil
        }
    }

    /// How the CLI names the place. Documents given on the command line read as paths
    /// (`devices[17]`); files carry the pointer as a URI fragment (RFC 6901 §6):
    /// `config/gateway.json#/server/listen`.
    public var place: String {
        switch self {
        case .none: return ""
        case .pointer(let path): return path.description
        case .file(let file, let path):
            let shown = TextSafety.escapedForDisplay(file)
            return path.components.isEmpty ? shown : shown + "#" + TextSafety.escapedForDisplay(path.pointer)
        case .line(let number, let file):
            return file.map { TextSafety.escapedForDisplay($0) + ":\(number)" } ?? "line \(number)"
        case .parameter(let name): return "parameter " + TextSafety.escapedForDisplay(name)
        case .header(let name): return "header " + TextSafety.escapedForDisplay(name)
        case .environment(let name): return "environment variable " + TextSafety.escapedForDisplay(name)
        case .option(let name): return name
        }
    }

    /// The location as its own member of an API error object: `pointer`, `parameter`,
    /// `header`, `line`, `variable` or `option`.
    public var member: JSONMember? {
        switch self {
        case .none: return nil
        case .pointer(let path), .file(_, let path): return JSONMember(key: "pointer", value: .string(path.pointer))
        case .line(let number, _): return JSONMember(key: "line", value: .number(String(number)))
        case .parameter(let name): return JSONMember(key: "parameter", value: .string(name))
        case .header(let name): return JSONMember(key: "header", value: .string(name))
        case .environment(let name): return JSONMember(key: "variable", value: .string(name))
        case .option(let name): return JSONMember(key: "option", value: .string(name))
        }
    }
}

extension Diagnostic {
    /// `{"pointer":…,"code":…,"detail":…}`: one entry of a problem's `errors` array, the
    /// location first as its own member.
    public func append(to w: inout JSONWriter) {
        w.object { w in
            if let member = location.member {
                w.key(member.key)
                w.value(member.value)
            }
            w.member("code", code.rawValue)
            w.member("detail", message)
        }
    }
}

// MARK: - The codes every document reader shares

extension DiagnosticCode {
    // The text is not strict JSON (`JSONParseError.Code`).
    public static let invalidJSON = DiagnosticCode(rawValue: "invalidJSON")
    public static let invalidUTF8 = DiagnosticCode(rawValue: "invalidUTF8")
    public static let duplicateKey = DiagnosticCode(rawValue: "duplicateKey")
    public static let tooDeep = DiagnosticCode(rawValue: "tooDeep")
    public static let tooLarge = DiagnosticCode(rawValue: "tooLarge")

    // The JSON is well formed, but not the document expected: the same four words for a
    // campaign, a request body, a route table, an AASA file and the configuration.
    /// A member the reader does not know (a typo must never fall back to a default).
    public static let unknownKey = DiagnosticCode(rawValue: "unknownKey")
    /// A required member (or setting) is absent.
    public static let missing = DiagnosticCode(rawValue: "missing")
    /// A value of the wrong JSON type.
    public static let wrongType = DiagnosticCode(rawValue: "wrongType")
    /// The right type, but not an acceptable value.
    public static let invalidValue = DiagnosticCode(rawValue: "invalidValue")
    /// Two members that cannot be given together.
    public static let conflictingFields = DiagnosticCode(rawValue: "conflictingFields")

    // Files named by the configuration or the command line.
    /// The file (or folder) does not exist or cannot be opened.
    public static let fileNotFound = DiagnosticCode(rawValue: "fileNotFound")
    /// It exists but cannot be read as a file (a folder, a read error).
    public static let fileUnreadable = DiagnosticCode(rawValue: "fileUnreadable")
    /// It is larger than the limit for that kind of file.
    public static let fileTooLarge = DiagnosticCode(rawValue: "fileTooLarge")
}

extension DiagnosticDomain {
    public static let json = DiagnosticDomain("json", [.invalidJSON, .invalidUTF8, .duplicateKey, .tooDeep, .tooLarge])
    public static let document = DiagnosticDomain("document", [.unknownKey, .missing, .wrongType, .invalidValue,
                                                               .conflictingFields])
    public static let files = DiagnosticDomain("files", [.fileNotFound, .fileUnreadable, .fileTooLarge])
}

extension Diagnostic {
    /// The one wording of an unknown key, for every document: `unknown key "colour";
    /// expected one of: listen, threads`.
    public static func unknownKeyMessage(_ key: String, expected: [String]) -> String {
        "unknown key \(JSONWriter.quoted(key)); expected one of: \(expected.joined(separator: ", "))"
    }
}

extension JSONParseError.Code {
    public var diagnosticCode: DiagnosticCode { DiagnosticCode(rawValue: rawValue) }
}

extension JSONParseError {
    /// The problem at its pointer, with the line and column in the message.
    public func diagnostic(in file: String? = nil) -> Diagnostic {
        let location: DiagnosticLocation = file.map { .file($0, at: path) } ?? .pointer(path)
        return Diagnostic(code.diagnosticCode, at: location, "line \(line), column \(column): \(message)")
    }
}
