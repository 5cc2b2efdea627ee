import StrictJSON

/// Typed reads from the route table's JSON with errors that name the file and the path.
/// A read that fails throws its problem; `collect` records it and lets the loader go on,
/// so every problem in the table is reported at once.
struct TableReader {
    let source: String
    /// The problems recorded so far (shared by every copy of the reader).
    final class Problems: @unchecked Sendable {
        var list: [RouteTableError] = []
    }
    let problems = Problems()

    /// The value, or nil after recording why not.
    func collect<T>(_ read: () throws(RouteTableError) -> T) -> T? {
        do { return try read() } catch {
            problems.list.append(error)
            return nil
        }
    }

    func record(_ error: RouteTableError) { problems.list.append(error) }

    func error(_ path: JSONPath, _ message: String, _ code: DiagnosticCode = .invalidValue) -> RouteTableError {
        RouteTableError(code, source: source, path: path, message: message)
    }

    /// The object at `path`; each unknown and each missing key is recorded.
    func object(_ json: JSON, at path: JSONPath, required: [String], optional: [String] = [])
        throws(RouteTableError) -> JSONObject
    {
        guard let object = json.objectValue else {
            throw error(path, "expected an object, found \(json.kindDescription)", .wrongType)
        }
        for key in object.keys where !required.contains(key) && !optional.contains(key) {
            record(error(path.appending(key), Diagnostic.unknownKeyMessage(key, expected: required + optional), .unknownKey))
        }
        for key in required where object[key] == nil {
            record(error(path, "missing key \(JSONWriter.quoted(key))", .missing))
        }
        return object
    }

    func string(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> String {
        guard let s = json.stringValue else {
            throw error(path, "expected a string, found \(json.kindDescription)", .wrongType)
        }
        return s
    }

    func array(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> [JSON] {
        guard let a = json.arrayValue else {
            throw error(path, "expected an array, found \(json.kindDescription)", .wrongType)
        }
        return a
    }

    func bool(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> Bool {
        guard let b = json.boolValue else {
            throw error(path, "expected true or false, found \(json.kindDescription)", .wrongType)
        }
        return b
    }

    /// A list of distinct strings.
    func stringList(_ json: JSON, at path: JSONPath, what: String) throws(RouteTableError) -> [String] {
        var out: [String] = []
        for (i, element) in try array(json, at: path).enumerated() {
            let s = try string(element, at: path.appending(index: i))
            if out.contains(s) {
                throw error(path.appending(index: i), "duplicate \(what) \(JSONWriter.quoted(s))")
            }
            out.append(s)
        }
        return out
    }

    /// A value type: `"int"`, `"uuid"`, `"slug"`, `"string"` or a list of allowed values.
    func valueType(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> ValueType {
        switch json {
        case .string(let name):
            switch name {
            case "int": return .int
            case "uuid": return .uuid
            case "slug": return .slug
            case "string": return .string
            default:
                throw error(path, "unknown type \(JSONWriter.quoted(name)) (expected \"int\", \"uuid\", \"slug\", \"string\" or a list of allowed values)")
            }
        case .array:
            let values = try stringList(json, at: path, what: "allowed value")
            if values.isEmpty { throw error(path, "the list of allowed values is empty") }
            for (i, value) in values.enumerated() {
                if !ValueType.string.accepts(value) || value.contains("/") || value.contains("\\") {
                    throw error(path.appending(index: i),
                                "allowed value \(JSONWriter.quoted(value)) must be 1–256 characters with no whitespace, control, format characters, '/' or '\\'")
                }
            }
            return .oneOf(values)
        default:
            throw error(path, "expected a type name or a list of allowed values, found \(json.kindDescription)", .wrongType)
        }
    }
}
