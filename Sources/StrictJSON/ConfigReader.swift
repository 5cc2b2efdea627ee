/// The one reader of JSON documents: the gateway configuration, route tables, templates,
/// campaigns and request bodies. It reads the way StrictJSON parses: strictly (unknown keys,
/// wrong types and out-of-range values are errors, never defaults) and with every problem
/// collected as a `Diagnostic` located in the file (or body) by JSON pointer, or at the
/// environment variable that gave the value, instead of stopping at the first. Each
/// document adds its own value rules as an extension in the module that owns them.
///
/// The configuration (`init(file:environment:)`) is read with overrides from the
/// environment and every value recorded for `config print`; any other document
/// (`init(document:)`) is read as written, nothing recorded.
///
/// One rule names every override: `PUSHGATE_` + the setting's path, each key in upper snake
/// case (`server.listen` → `PUSHGATE_SERVER_LISTEN`, `apns.retry.maxAttempts` →
/// `PUSHGATE_APNS_RETRY_MAX_ATTEMPTS`, `topic` → `PUSHGATE_TOPIC`). A variable wins over
/// the file. Strings are taken as written; numbers and booleans are parsed; a setting that
/// is an array or an object takes JSON text.
///
/// A secret (a setting read with `secret: true`) may instead come from a file named by its
/// variable plus `_FILE` (`PUSHGATE_WEBHOOK_SECRET_FILE`): the file's text, one final
/// newline dropped, as systemd credentials and container secrets provide it. Setting both
/// variables is an error; so is a file that cannot be read, or is not UTF-8.
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

    /// The file's name as shown in messages ("" for a document that is not a file).
    public let file: String
    /// The folder relative paths in the file resolve against.
    public let folder: String
    public let environment: [String: String]
    /// The configuration: values may come from the environment and are recorded.
    public let isConfiguration: Bool
    /// Problems are located in `file`; otherwise by JSON pointer alone (a request body).
    private let inFile: Bool
    public private(set) var diagnostics: [Diagnostic] = []
    public private(set) var entries: [Entry] = []
    /// Every variable a setting looked for, set or not.
    public private(set) var consulted: Set<String> = []
    /// Reads the file a secret's `…_FILE` variable names (this module does no I/O): its
    /// bytes, or the problem located at `location`. nil: such variables are not read.
    public typealias FileReader = @Sendable (_ path: String, _ location: DiagnosticLocation) -> Result<[UInt8], Diagnostic>
    private let readFile: FileReader?

    /// The gateway configuration in `file`, with overrides from `environment`; `readFile`
    /// reads the files secrets' `…_FILE` variables name.
    public init(file: String, environment: [String: String] = [:], readFile: FileReader? = nil) {
        self.file = file
        self.folder = Self.directory(of: file)
        self.environment = environment
        self.readFile = readFile
        isConfiguration = true
        inFile = true
    }

    /// Another document: a route table or a template in `file`, or a campaign or request
    /// body (`nil`: problems are located by JSON pointer).
    public init(document file: String?) {
        self.file = file ?? ""
        self.folder = file.map(Self.directory(of:)) ?? "."
        environment = [:]
        readFile = nil
        isConfiguration = false
        inFile = file != nil
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
        guard isConfiguration else { return nil }
        let variable = Self.overridingVariable(for: path)
        if let variable { consulted.insert(variable) }
        return variable
    }

    /// What the environment says for the setting at `path`.
    enum Override {
        /// No variable: the file's value or the default.
        case none
        /// The text and the variable it came from (for a secret, maybe its `_FILE`).
        case text(String, variable: String)
        /// A variable was set but gave no value (its problem is reported).
        case failed
    }

    /// The setting's variable, or for a secret (`secretFile`) the file its `_FILE` variable names.
    mutating func override(_ path: JSONPath, secretFile: Bool) -> Override {
        guard let variable = consult(path) else { return .none }
        let fileVariable = variable + "_FILE"
        guard secretFile, readFile != nil else {
            return environment[variable].map { .text($0, variable: variable) } ?? .none
        }
        consulted.insert(fileVariable)
        switch (environment[variable], environment[fileVariable]) {
        case (nil, nil): return .none
        case (let text?, nil): return .text(text, variable: variable)
        case (_?, _?):
            report(.conflictingFields, at: .environment(fileVariable), "expected either \(variable) or \(fileVariable), not both")
            return .failed
        case (nil, let name?):
            return secret(inFile: name, variable: fileVariable).map { .text($0, variable: fileVariable) } ?? .failed
        }
    }

    /// The text of the secret file `name` (relative to the working directory, as every path
    /// from the environment), one final newline dropped; nil after reporting why not.
    private mutating func secret(inFile name: String, variable: String) -> String? {
        guard let readFile else { return nil }
        guard !name.isEmpty else {
            report(.invalidValue, at: .environment(variable), "expected the path of the file holding the secret, found an empty value")
            return nil
        }
        switch readFile(name, .environment(variable)) {
        case .failure(let problem):
            diagnostics.append(problem)
            return nil
        case .success(var bytes):
            if bytes.last == 0x0A {
                bytes.removeLast()
                if bytes.last == 0x0D { bytes.removeLast() }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                report(.invalidValue, at: .environment(variable), "the file \(TextSafety.quoted(name)) is not UTF-8 text")
                return nil
            }
            return text
        }
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

    /// The place in the file (or the body).
    public func location(_ path: JSONPath) -> DiagnosticLocation { inFile ? .file(file, at: path) : .pointer(path) }

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
            case .file(_, let p), .pointer(let p): return p == path
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
        guard isConfiguration else { return }
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
        rejectUnknownKeys(object, at: path, keys: keys)
        return object
    }

    /// Reports each member of `object` (at `path`) that is not one of `keys`, which the
    /// message lists in this order.
    public mutating func rejectUnknownKeys(_ object: JSONObject, at path: JSONPath, keys: [String]) {
        for member in object.members where !keys.contains(member.key) {
            report(.unknownKey, at: path.appending(member.key), Diagnostic.unknownKeyMessage(member.key, expected: keys))
        }
    }

    /// `json` as an object with its unknown keys and each missing `required` key reported
    /// (a missing key at the object: it has no place of its own); nil after `wrongType`.
    public mutating func object(_ json: JSON, at path: JSONPath, required: [String], optional: [String] = []) -> JSONObject? {
        guard case .object(let object) = json else {
            report(.wrongType, at: path, "expected an object, found \(json.kindDescription)")
            return nil
        }
        rejectUnknownKeys(object, at: path, keys: required + optional)
        for key in required where object[key] == nil {
            report(.missing, at: path, "missing key \(JSONWriter.quoted(key))")
        }
        return object
    }

    /// The member `key` of `object` (at `section`) when it is an object, whatever its keys;
    /// nil when absent or (after `wrongType`) not an object.
    public mutating func object(_ object: JSONObject, _ key: String, at section: JSONPath) -> JSONObject? {
        guard let json = object[key] else { return nil }
        guard case .object(let inner) = json else {
            report(.wrongType, at: section.appending(key), "expected an object, found \(json.kindDescription)")
            return nil
        }
        return inner
    }

    // MARK: values of a document

    /// `json` as a string; nil after `wrongType`.
    public mutating func string(_ json: JSON, at path: JSONPath) -> String? {
        guard case .string(let s) = json else {
            report(.wrongType, at: path, "expected a string, found \(json.kindDescription)")
            return nil
        }
        return s
    }

    /// `json` as true or false; nil after `wrongType`.
    public mutating func bool(_ json: JSON, at path: JSONPath) -> Bool? {
        guard case .bool(let b) = json else {
            report(.wrongType, at: path, "expected true or false, found \(json.kindDescription)")
            return nil
        }
        return b
    }

    /// `json` as an array; nil after `wrongType`.
    public mutating func array(_ json: JSON, at path: JSONPath) -> [JSON]? {
        guard case .array(let items) = json else {
            report(.wrongType, at: path, "expected an array, found \(json.kindDescription)")
            return nil
        }
        return items
    }

    /// `json` as an array of strings, each item that is not one reported; with `distinct`
    /// (what an item is, for the message) each repeated item too. Nil after any problem.
    public mutating func strings(_ json: JSON, at path: JSONPath, distinct: String? = nil) -> [String]? {
        guard case .array(let items) = json else {
            report(.wrongType, at: path, "expected an array of strings, found \(json.kindDescription)")
            return nil
        }
        var out: [String] = []
        out.reserveCapacity(items.count)
        var ok = true
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else {
                report(.wrongType, at: path.appending(index: i), "expected a string, found \(item.kindDescription)")
                ok = false
                continue
            }
            if let what = distinct, out.contains(s) {
                report(.invalidValue, at: path.appending(index: i), "duplicate \(what) \(JSONWriter.quoted(s))")
                ok = false
                continue
            }
            out.append(s)
        }
        return ok ? out : nil
    }

    /// The member `key` of `object` as an array of strings (see `strings(_:at:distinct:)`).
    public mutating func strings(_ object: JSONObject, _ key: String, at section: JSONPath, distinct: String? = nil) -> [String]? {
        object[key].flatMap { strings($0, at: section.appending(key), distinct: distinct) }
    }

    /// The raw value from the environment (JSON text) or the file, for settings that are
    /// arrays or objects (`secret`: its variable may name a file, see above). Nothing is
    /// recorded: the caller records what it made of it.
    public mutating func json(_ object: JSONObject, _ key: String, at section: JSONPath, secret: Bool = false) -> Setting<JSON>? {
        let path = section.appending(key)
        switch override(path, secretFile: secret) {
        case .failed: return nil
        case .text(let text, let variable):
            do {
                return Setting(value: try JSONParser(maxDepth: 16).parse(text), location: .environment(variable), origin: .environment(variable))
            } catch {
                report(error.code.diagnosticCode, at: .environment(variable), "expected JSON text: \(error.description)")
                return nil
            }
        case .none:
            return object[key].map { Setting(value: $0, location: location(path), origin: .file) }
        }
    }

    // MARK: typed settings

    /// A string setting; `validate` returns why a value is refused (`invalidValue`). A
    /// `secret` is redacted in `config print` and, unless `secretFile` is false (a setting
    /// whose own name ends in `File` took its `_FILE` variable), may come from a file.
    public mutating func string(_ object: JSONObject, _ key: String, at section: JSONPath, default fallback: String? = nil,
                                secret: Bool = false, secretFile: Bool = true,
                                validate: (String) -> String? = { _ in nil }) -> Setting<String>? {
        let path = section.appending(key)
        let found: Setting<String>
        let override = override(path, secretFile: secret && secretFile)
        if case .failed = override { return nil }
        if case .text(let text, let variable) = override {
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
