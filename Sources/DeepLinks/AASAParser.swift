import StrictJSON

/// Why a file cannot be read as an AASA at all (the CLI's exit status 2).
public struct AASAError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// Not JSON (or not UTF-8, duplicate keys, too deep).
        case invalidJSON
        /// A required key is absent.
        case missingKey = "missing"
        /// A value of the wrong JSON type.
        case wrongType
        /// A pattern uses `$(name)` that is neither in `substitutionVariables` nor predefined.
        case unknownVariable
        /// A `substitutionVariables` entry Apple would refuse (a value that uses a variable).
        case invalidVariable
        /// Valid for Apple but not evaluated here (`$(region)`, `$(lang)`, a pattern whose
        /// variables expand to more than 4096 plain patterns, a pattern over 1024
        /// characters).
        case unsupported
    }

    public var code: Code
    public var message: String
    public var path: JSONPath

    public init(code: Code, message: String, path: JSONPath) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String { "\(code.rawValue) at \(path): \(message)" }
}

/// Reads `applinks` from an AASA file: both the `components` form (iOS 13+) and the legacy
/// `paths` form, with `applinks.defaults` and `details[].defaults` applied to components
/// and `applinks.substitutionVariables` expanded in component patterns.
public enum AASAParser {
    /// Longer patterns are refused: no real path pattern comes close, and matching cost
    /// grows with pattern length times URL length (links themselves stop at 2048 bytes).
    public static let maxPatternScalars = 1024
    public static func parse(_ bytes: [UInt8]) throws(AASAError) -> AASADocument {
        let json: JSON
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw AASAError(code: .invalidJSON, message: "line \(error.line), column \(error.column): \(error.message)",
                            path: error.path)
        }
        return try parse(json)
    }

    public static func parse(_ json: JSON) throws(AASAError) -> AASADocument {
        var reader = Reader()
        return try reader.document(json)
    }

    private static let otherServices: Set<String> = ["webcredentials", "appclips", "activitycontinuation"]

    /// Matching settings that `defaults` objects pass down.
    private struct Settings {
        var caseSensitive = true
        var percentEncoded = true
    }

    private struct Reader {
        var ignored: [AASAIgnored] = []
        var substitutions = AASASubstitutions()

        mutating func document(_ json: JSON) throws(AASAError) -> AASADocument {
            let root = try object(json, at: .root, what: "the document")
            for key in root.keys where key != "applinks" && !otherServices.contains(key) {
                ignore(JSONPath.root.appending(key), "unknown top-level key \(JSONWriter.quoted(key))")
            }
            let applinksPath = JSONPath.root.appending("applinks")
            guard let applinksValue = root["applinks"] else {
                throw AASAError(code: .missingKey, message: "no \"applinks\": not a universal-links association file",
                                path: .root)
            }
            let applinks = try object(applinksValue, at: applinksPath, what: "applinks")
            var settings = Settings()
            for member in applinks.members {
                let path = applinksPath.appending(member.key)
                switch member.key {
                case "details": break
                case "apps": _ = try array(member.value, at: path, what: "apps")  // legacy, must be []
                case "defaults": settings = try defaults(member.value, at: path, inheriting: settings)
                case "substitutionVariables": substitutions = try variables(member.value, at: path)
                default: ignore(path, "unknown key \(JSONWriter.quoted(member.key)) in applinks")
                }
            }
            let detailsPath = applinksPath.appending("details")
            guard let detailsValue = applinks["details"] else {
                throw AASAError(code: .missingKey, message: "applinks has no \"details\" array", path: applinksPath)
            }
            var details: [AASADetail] = []
            for (index, item) in try array(detailsValue, at: detailsPath, what: "details").enumerated() {
                details.append(try detail(item, at: detailsPath.appending(index: index), inheriting: settings))
            }
            return AASADocument(details: details, ignored: ignored)
        }

        mutating func detail(_ json: JSON, at path: JSONPath, inheriting inherited: Settings) throws(AASAError) -> AASADetail {
            let object = try object(json, at: path, what: "a details entry")
            var settings = inherited
            var appIDs: [String]?
            var legacyAppID: String?
            for member in object.members {
                let memberPath = path.appending(member.key)
                switch member.key {
                case "appIDs":
                    var ids: [String] = []
                    for (i, item) in try array(member.value, at: memberPath, what: "appIDs").enumerated() {
                        ids.append(try string(item, at: memberPath.appending(index: i), what: "an app ID"))
                    }
                    appIDs = ids
                case "appID": legacyAppID = try string(member.value, at: memberPath, what: "appID")
                case "defaults": settings = try defaults(member.value, at: memberPath, inheriting: inherited)
                case "components", "paths": break
                default: ignore(memberPath, "unknown key \(JSONWriter.quoted(member.key)) in a details entry")
                }
            }
            if appIDs != nil && legacyAppID != nil {
                ignore(path.appending("appID"), "appID is ignored because appIDs is present")
            }
            guard let ids = appIDs ?? legacyAppID.map({ [$0] }) else {
                throw AASAError(code: .missingKey, message: "details entry names no app: expected \"appIDs\" or \"appID\"",
                                path: path)
            }
            var rules: [AASARule] = []
            if let components = object["components"] {
                let componentsPath = path.appending("components")
                for (i, item) in try array(components, at: componentsPath, what: "components").enumerated() {
                    rules.append(try component(item, at: componentsPath.appending(index: i), inheriting: settings))
                }
                if object["paths"] != nil {
                    ignore(path.appending("paths"), "paths is ignored because components is present (iOS 13 and later)")
                }
            } else if let paths = object["paths"] {
                let pathsPath = path.appending("paths")
                for (i, item) in try array(paths, at: pathsPath, what: "paths").enumerated() {
                    let itemPath = pathsPath.appending(index: i)
                    let text = try string(item, at: itemPath, what: "a path pattern")
                    try checkLength(text, at: itemPath)
                    let excluded = text.hasPrefix("NOT ")
                    let pattern = excluded ? String(text.dropFirst(4)) : text
                    rules.append(AASARule(path: AASAPattern(pattern), exclude: excluded, location: itemPath))
                }
            }
            return AASADetail(appIDs: ids, rules: rules, location: path)
        }

        mutating func component(_ json: JSON, at path: JSONPath, inheriting inherited: Settings) throws(AASAError) -> AASARule {
            let object = try object(json, at: path, what: "a component")
            var rule = AASARule(path: nil, caseSensitive: inherited.caseSensitive,
                                percentEncoded: inherited.percentEncoded, location: path)
            for member in object.members {
                let memberPath = path.appending(member.key)
                switch member.key {
                case "/": rule.path = try pattern(member.value, at: memberPath, what: "the \"/\" pattern")
                case "#": rule.fragment = try pattern(member.value, at: memberPath, what: "the \"#\" pattern")
                case "?": rule.query = try queryRule(member.value, at: memberPath)
                case "exclude": rule.exclude = try bool(member.value, at: memberPath, what: "exclude")
                case "comment": rule.comment = try string(member.value, at: memberPath, what: "comment")
                case "caseSensitive": rule.caseSensitive = try bool(member.value, at: memberPath, what: "caseSensitive")
                case "percentEncoded": rule.percentEncoded = try bool(member.value, at: memberPath, what: "percentEncoded")
                default: ignore(memberPath, "unknown key \(JSONWriter.quoted(member.key)) in a component")
                }
            }
            return rule
        }

        func queryRule(_ json: JSON, at path: JSONPath) throws(AASAError) -> AASAQueryRule {
            switch json {
            case .string: return .whole(try pattern(json, at: path, what: "the \"?\" pattern"))
            case .object(let object):
                var items: [(name: String, pattern: AASAPattern)] = []
                for member in object.members {
                    let value = try pattern(member.value, at: path.appending(member.key), what: "a query item pattern")
                    items.append((member.key, value))
                }
                return .items(items)
            default:
                throw wrongType(json, at: path, expected: "a string or an object of strings (the \"?\" pattern)")
            }
        }

        /// A component pattern with its substitution variables expanded.
        func pattern(_ json: JSON, at path: JSONPath, what: String) throws(AASAError) -> AASAPattern {
            let text = try string(json, at: path, what: what)
            try checkLength(text, at: path)
            do throws(AASASubstitutions.ExpansionError) {
                return AASAPattern(text: text, alternatives: try substitutions.expand(text))
            } catch {
                switch error {
                case .unknown(let name):
                    throw AASAError(code: .unknownVariable, message: "pattern uses $(\(TextSafety.escapedForDisplay(name))), "
                                    + "which is not in substitutionVariables and not predefined", path: path)
                case .unsupported(let name):
                    throw AASAError(code: .unsupported, message: "the predefined variable $(\(name)) (ISO codes) "
                                    + "is not supported by this validator", path: path)
                case .tooMany(let count):
                    throw AASAError(code: .unsupported, message: "pattern expands to \(count) plain patterns; "
                                    + "the limit is \(AASASubstitutions.maxExpansions)", path: path)
                }
            }
        }

        func checkLength(_ pattern: String, at path: JSONPath) throws(AASAError) {
            let count = pattern.unicodeScalars.count
            if count > maxPatternScalars {
                throw AASAError(code: .unsupported, message: "pattern is \(count) characters; "
                                + "patterns over \(maxPatternScalars) are not evaluated", path: path)
            }
        }

        func variables(_ json: JSON, at path: JSONPath) throws(AASAError) -> AASASubstitutions {
            var custom: [String: [String]] = [:]
            for member in try object(json, at: path, what: "substitutionVariables").members {
                let memberPath = path.appending(member.key)
                if member.key.contains(where: { $0 == "$" || $0 == "(" || $0 == ")" }) {
                    throw AASAError(code: .invalidVariable, message: "a variable name cannot contain '$', '(' or ')'",
                                    path: memberPath)
                }
                var values: [String] = []
                for (i, item) in try array(member.value, at: memberPath, what: "the variable's values").enumerated() {
                    let value = try string(item, at: memberPath.appending(index: i), what: "a value")
                    if value.contains("$(") {
                        throw AASAError(code: .invalidVariable, message: "a value cannot use another variable",
                                        path: memberPath.appending(index: i))
                    }
                    values.append(value)
                }
                custom[member.key] = values
            }
            return AASASubstitutions(custom: custom)
        }

        mutating func defaults(_ json: JSON, at path: JSONPath, inheriting inherited: Settings) throws(AASAError) -> Settings {
            var settings = inherited
            for member in try object(json, at: path, what: "defaults").members {
                let memberPath = path.appending(member.key)
                switch member.key {
                case "caseSensitive": settings.caseSensitive = try bool(member.value, at: memberPath, what: "caseSensitive")
                case "percentEncoded": settings.percentEncoded = try bool(member.value, at: memberPath, what: "percentEncoded")
                default: ignore(memberPath, "unknown key \(JSONWriter.quoted(member.key)) in defaults")
                }
            }
            return settings
        }

        mutating func ignore(_ path: JSONPath, _ message: String) {
            ignored.append(AASAIgnored(location: path, message: message))
        }

        func object(_ json: JSON, at path: JSONPath, what: String) throws(AASAError) -> JSONObject {
            guard let o = json.objectValue else { throw wrongType(json, at: path, expected: "an object (\(what))") }
            return o
        }

        func array(_ json: JSON, at path: JSONPath, what: String) throws(AASAError) -> [JSON] {
            guard let a = json.arrayValue else { throw wrongType(json, at: path, expected: "an array (\(what))") }
            return a
        }

        func string(_ json: JSON, at path: JSONPath, what: String) throws(AASAError) -> String {
            guard let s = json.stringValue else { throw wrongType(json, at: path, expected: "a string (\(what))") }
            return s
        }

        func bool(_ json: JSON, at path: JSONPath, what: String) throws(AASAError) -> Bool {
            guard let b = json.boolValue else { throw wrongType(json, at: path, expected: "true or false (\(what))") }
            return b
        }

        func wrongType(_ json: JSON, at path: JSONPath, expected: String) -> AASAError {
            AASAError(code: .wrongType, message: "expected \(expected), found \(json.kindDescription)", path: path)
        }
    }
}
