/// Reads settings out of a configuration document the way StrictJSON reads JSON: strictly
/// (unknown keys, wrong types and out-of-range values are errors, never defaults) and with
/// every problem collected as a `Diagnostic` located in the file or at the environment
/// variable that gave the value, instead of stopping at the first.
///
/// One rule names every override: `PUSHGATE_` + the setting's path, each key in upper snake
/// case (`server.listen` → `PUSHGATE_SERVER_LISTEN`, `apns.retry.maxAttempts` →
/// `PUSHGATE_APNS_RETRY_MAX_ATTEMPTS`, `topic` → `PUSHGATE_TOPIC`). A variable wins over
/// the file. Strings are taken as written; numbers and booleans are parsed; a setting that
/// is an array or an object takes JSON text.
///
/// Every value read is recorded with where it came from, so `pushgate config print` can
/// show the effective configuration (defaults included, secrets redacted).
public struct ConfigReader: Sendable {
    /// Where a setting's value came from.
    public enum Origin: Sendable, Equatable {
        case file
        case environment(String)
        case defaultValue
    }

    /// One effective setting, for `config print`.
    public struct Entry: Sendable, Equatable {
        public var path: JSONPath
        public var value: JSON
        public var origin: Origin
        public var secret: Bool
    }

    /// A value and where it is, so later checks can point at it.
    public struct Setting<Value: Sendable>: Sendable {
        public var value: Value
        public var location: DiagnosticLocation
        public var origin: Origin
        /// For a path: the text as written, before it was resolved.
        public var written: String?

        public init(value: Value, location: DiagnosticLocation, origin: Origin, written: String? = nil) {
            self.value = value
            self.location = location
            self.origin = origin
            self.written = written
        }
    }

    /// The configuration file's name as shown in messages.
    public let file: String
    /// The folder relative paths in the file resolve against.
    public let folder: String
    public let environment: [String: String]
    public private(set) var diagnostics: [Diagnostic] = []
    public private(set) var entries: [Entry] = []
    /// Every variable a setting looked for, set or not.
    public private(set) var consulted: Set<String> = []

    public init(file: String, environment: [String: String] = [:]) {
        self.file = file
        self.folder = Self.directory(of: file)
        self.environment = environment
    }

    public var isValid: Bool { diagnostics.isEmpty }

    // MARK: names and places

    /// `PUSHGATE_SERVER_MAX_BODY_BYTES` for `server.maxBodyBytes`.
    public static func variableName(for path: JSONPath) -> String {
        var name = "PUSHGATE"
        for component in path.components {
            guard case .key(let key) = component else { continue }
            name += "_"
            var previousWasLower = false
            for scalar in key.unicodeScalars {
                let isUpper = scalar.value >= 0x41 && scalar.value <= 0x5A
                if isUpper && previousWasLower { name += "_" }
                if scalar.value >= 0x61 && scalar.value <= 0x7A {
                    name.unicodeScalars.append(Unicode.Scalar(scalar.value - 0x20)!)
                } else {
                    name.unicodeScalars.append(scalar)
                }
                previousWasLower = !isUpper && scalar != "_"
            }
        }
        return name
    }

    /// The variable that overrides the setting at `path`; none inside an array (an item of
    /// `server.apiKeys` has no name of its own: the whole list is one JSON-valued variable).
    public static func overridingVariable(for path: JSONPath) -> String? {
        for component in path.components { if case .index = component { return nil } }
        return variableName(for: path)
    }

    /// The overriding variable of the setting at `path`, remembered as looked for.
    mutating func consult(_ path: JSONPath) -> String? {
        let variable = Self.overridingVariable(for: path)
        if let variable { consulted.insert(variable) }
        return variable
    }

    /// A variable in a settings namespace (`PUSHGATE_SERVER_…`) that no setting read is a
    /// typo or a setting with no effect: reported, never silently ignored. Other
    /// `PUSHGATE_` variables (`PUSHGATE_CONFIG`, tools' own) are not settings.
    public mutating func reportUnreadVariables(namespaces: [JSONPath], names: [JSONPath] = []) {
        let prefixes = namespaces.map { Self.variableName(for: $0) + "_" }
        let exact = Set(names.map { Self.variableName(for: $0) })
        for name in environment.keys.sorted() where !consulted.contains(name) {
            guard exact.contains(name) || prefixes.contains(where: { name.hasPrefix($0) }) else { continue }
            report(.unknownKey, at: .environment(name),
                   "no setting reads this variable: a setting's variable is PUSHGATE_ and its path in upper snake case (PUSHGATE_SERVER_LISTEN), and webhook variables need a webhook")
        }
    }

    /// The place in the file.
    public func location(_ path: JSONPath) -> DiagnosticLocation { .file(file, at: path) }

    public mutating func report(_ code: DiagnosticCode, at location: DiagnosticLocation, _ message: String) {
        diagnostics.append(Diagnostic(code, at: location, message))
    }

    public mutating func report(_ code: DiagnosticCode, at path: JSONPath, _ message: String) {
        report(code, at: location(path), message)
    }

    /// True when a problem was already reported for the setting at `path` (in the file or
    /// in its variable), so a later rule does not blame it twice.
    public func hasProblem(at path: JSONPath) -> Bool {
        let variable = Self.overridingVariable(for: path)
        return diagnostics.contains { d in
            switch d.location {
            case .file(_, let p): return p == path
            case .environment(let name): return name == variable
            default: return false
            }
        }
    }

    /// Adds problems found by another reader (a route table, a template), as they are.
    public mutating func append(_ more: [Diagnostic]) {
        diagnostics += more
    }

    /// Records a value for `config print` that no accessor below read (a list of objects).
    public mutating func record(_ path: JSONPath, _ value: JSON, origin: Origin, secret: Bool = false) {
        entries.append(Entry(path: path, value: value, origin: origin, secret: secret))
    }

    // MARK: objects

    /// The object at `path` with its unknown keys reported; an empty object when absent
    /// (or, after reporting `wrongType`, when it is not an object).
    public mutating func section(_ json: JSON?, at path: JSONPath, keys: [String]) -> JSONObject {
        guard let json else { return JSONObject() }
        guard case .object(let object) = json else {
            report(.wrongType, at: path, "expected an object, found \(json.kindDescription)")
            return JSONObject()
        }
        for key in object.keys where !keys.contains(key) {
            report(.unknownKey, at: path.appending(key), Diagnostic.unknownKeyMessage(key, expected: keys))
        }
        return object
    }

    /// The raw value from the environment (JSON text) or the file, for settings that are
    /// arrays or objects. Nothing is recorded: the caller records what it made of it.
    public mutating func json(_ object: JSONObject, _ key: String, at section: JSONPath) -> Setting<JSON>? {
        let path = section.appending(key)
        if let variable = consult(path), let text = environment[variable] {
            do {
                return Setting(value: try JSONParser(maxDepth: 16).parse(text), location: .environment(variable), origin: .environment(variable))
            } catch {
                report(error.code.diagnosticCode, at: .environment(variable), "expected JSON text: \(error.description)")
                return nil
            }
        }
        return object[key].map { Setting(value: $0, location: location(path), origin: .file) }
    }

    // MARK: typed settings

    /// A string setting; `validate` returns why a value is refused (`invalidValue`).
    public mutating func string(_ object: JSONObject, _ key: String, at section: JSONPath, default fallback: String? = nil,
                                secret: Bool = false, validate: (String) -> String? = { _ in nil }) -> Setting<String>? {
        let path = section.appending(key)
        let found: Setting<String>
        if let variable = consult(path), let text = environment[variable] {
            found = Setting(value: text, location: .environment(variable), origin: .environment(variable))
        } else if let json = object[key] {
            guard case .string(let text) = json else {
                report(.wrongType, at: path, "expected a string, found \(json.kindDescription)")
                return nil
            }
            found = Setting(value: text, location: location(path), origin: .file)
        } else {
            if let fallback { record(path, .string(fallback), origin: .defaultValue, secret: secret) }
            return fallback.map { Setting(value: $0, location: location(path), origin: .defaultValue) }
        }
        if let problem = validate(found.value) {
            report(.invalidValue, at: found.location, problem)
            return nil
        }
        record(path, .string(found.value), origin: found.origin, secret: secret)
        return found
    }

    /// One of a fixed set of strings.
    public mutating func choice(_ object: JSONObject, _ key: String, at section: JSONPath, _ choices: [String],
                                default fallback: String) -> String {
        string(object, key, at: section, default: fallback) { value in
            choices.contains(value) ? nil : "expected \(Self.list(choices)), not \(JSONWriter.quoted(value))"
        }?.value ?? fallback
    }

    public mutating func bool(_ object: JSONObject, _ key: String, at section: JSONPath, default fallback: Bool) -> Bool {
        let path = section.appending(key)
        var value = fallback
        var origin = Origin.defaultValue
        if let variable = consult(path), let text = environment[variable] {
            switch text {
            case "true", "1": value = true
            case "false", "0": value = false
            default:
                report(.invalidValue, at: .environment(variable), "expected true, false, 1 or 0, not \(JSONWriter.quoted(text))")
                return fallback
            }
            origin = .environment(variable)
        } else if let json = object[key] {
            guard case .bool(let b) = json else {
                report(.wrongType, at: path, "expected true or false, found \(json.kindDescription)")
                return fallback
            }
            value = b
            origin = .file
        }
        record(path, .bool(value), origin: origin)
        return value
    }

    /// A whole number in `range`.
    public mutating func integer(_ object: JSONObject, _ key: String, at section: JSONPath, in range: ClosedRange<Int>,
                                 default fallback: Int?) -> Int? {
        number(object, key, at: section, in: Double(range.lowerBound)...Double(range.upperBound),
               default: fallback.map(Double.init), integer: true).map { Int($0) }
    }

    /// A number in `range` (`integer`: a whole number).
    public mutating func number(_ object: JSONObject, _ key: String, at section: JSONPath, in range: ClosedRange<Double>,
                                default fallback: Double?, integer: Bool = false) -> Double? {
        let path = section.appending(key)
        let text: String
        let location: DiagnosticLocation
        let origin: Origin
        if let variable = consult(path), let value = environment[variable] {
            (text, location, origin) = (value, .environment(variable), .environment(variable))
        } else if let json = object[key] {
            guard case .number(let literal) = json else {
                report(.wrongType, at: path, "expected \(integer ? "an integer" : "a number"), found \(json.kindDescription)")
                return fallback
            }
            (text, location, origin) = (literal, self.location(path), .file)
        } else {
            if let fallback { record(path, Self.numberJSON(fallback, integer: integer), origin: .defaultValue) }
            return fallback
        }
        let bounds = integer ? "\(Int(range.lowerBound)) to \(Int(range.upperBound))" : "\(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))"
        guard let n = Double(text), n.isFinite, range.contains(n), !integer || (n == n.rounded() && !text.contains(".")) else {
            report(.invalidValue, at: location, "expected \(integer ? "an integer" : "a number") from \(bounds), not \(JSONWriter.quoted(text))")
            return fallback
        }
        record(path, Self.numberJSON(n, integer: integer), origin: origin)
        return n
    }

    /// A file or folder path: relative paths in the file resolve against the file's folder,
    /// relative paths from the environment against the working directory (as a shell user
    /// expects).
    public mutating func path(_ object: JSONObject, _ key: String, at section: JSONPath, default fallback: String? = nil) -> Setting<String>? {
        guard var found = string(object, key, at: section, default: fallback, validate: { $0.isEmpty ? "expected a non-empty path" : nil })
        else { return nil }
        found.written = found.value
        if found.origin != .file && found.origin != .defaultValue { return found }
        found.value = Self.resolve(found.value, in: folder)
        // config print shows the path the program will open.
        if let last = entries.lastIndex(where: { $0.path == section.appending(key) }) {
            entries[last].value = .string(found.value)
        }
        return found
    }

    // MARK: helpers

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func resolve(_ path: String, in folder: String) -> String {
        if path.hasPrefix("/") || folder == "." { return path }
        return folder.hasSuffix("/") ? folder + path : folder + "/" + path
    }

    /// `"a", "b" or "c"`.
    public static func list(_ values: [String]) -> String {
        let quoted = values.map { JSONWriter.quoted($0) }
        guard quoted.count > 1 else { return quoted.first ?? "" }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
    }

    static func text(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
    }

    static func numberJSON(_ n: Double, integer: Bool) -> JSON {
        .number(integer || (n == n.rounded() && abs(n) < 1e15) ? String(Int(n)) : String(n))
    }
}

extension ConfigReader {
    /// The effective configuration as one JSON document, members in the order they were
    /// read, secrets replaced by `"(redacted)"`.
    public var effectiveDocument: JSON {
        var root = JSON.object(JSONObject())
        for entry in entries {
            let value: JSON = entry.secret ? .string("(redacted)") : entry.value
            root = Self.setting(root, entry.path.components[...], to: value)
        }
        return root
    }

    private static func setting(_ json: JSON, _ components: ArraySlice<JSONPath.Component>, to value: JSON) -> JSON {
        guard let first = components.first else { return value }
        guard case .key(let key) = first else { return json }
        var object = json.objectValue ?? JSONObject()
        if let i = object.members.firstIndex(where: { $0.key == key }) {
            object.members[i].value = setting(object.members[i].value, components.dropFirst(), to: value)
        } else {
            object.members.append(JSONMember(key: key, value: setting(.null, components.dropFirst(), to: value)))
        }
        return .object(object)
    }
}
