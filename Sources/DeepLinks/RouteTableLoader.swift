import StrictJSON

/// Reads a route table document, checking every key, type, pattern and name, then the
/// table as a whole for conflicting routes. Every problem is collected by the one
/// document reader (`ConfigReader`) and reported at once.
struct RouteTableLoader {
    var reader: ConfigReader

    init(source: String) {
        reader = ConfigReader(document: source)
    }

    struct Loaded {
        var app: AppIdentity
        var hosts: [String]
        var passthroughQuery: [String]
        var routes: [Route]
        var document: JSON
    }

    /// Schemes an app may not claim: the web's own and the dangerous ones.
    static let reservedSchemes: Set<String> = [
        "http", "https", "javascript", "vbscript", "data", "file", "about", "blob", "ftp",
        "ws", "wss", "mailto", "tel", "sms", "intent", "content", "chrome", "filesystem",
    ]

    /// Every problem in the table is reported (the first, with the rest in `others`);
    /// the route conflict check runs once the routes themselves are valid.
    mutating func load(_ bytes: [UInt8]) throws(RouteTableError) -> Loaded {
        let document: JSON
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            reader.report(error.code.diagnosticCode, at: error.path,
                          "invalid JSON: line \(error.line), column \(error.column): \(error.message)")
            throw refusal()
        }
        let root = JSONPath.root
        guard let top = reader.object(document, at: root, required: ["app", "hosts", "routes"],
                                      optional: ["passthroughQuery"]) else { throw refusal() }
        let app = top["app"].flatMap { readApp($0, at: root.appending("app")) }
        let hosts = top["hosts"].flatMap { readHosts($0, at: root.appending("hosts")) }
        let passthrough = top["passthroughQuery"].flatMap { readPassthrough($0, at: root.appending("passthroughQuery")) } ?? []
        let routesPath = root.appending("routes")
        var routes: [Route] = []
        var indices: [Int] = []  // each route's place in the file (routes that failed are skipped)
        if let json = top["routes"], let routeList = reader.array(json, at: routesPath) {
            if routeList.isEmpty { reader.report(.invalidValue, at: routesPath, "there must be at least one route") }
            for (i, json) in routeList.enumerated() {
                guard let route = readRoute(json, at: routesPath.appending(index: i), passthrough: passthrough) else { continue }
                if let earlier = routes.firstIndex(where: { $0.name == route.name }) {
                    reader.report(.invalidValue, at: routesPath.appending(index: i).appending("name"),
                                  "duplicate route name \(JSONWriter.quoted(route.name)) (also routes[\(indices[earlier])])")
                    continue
                }
                routes.append(route)
                indices.append(i)
            }
        }
        if reader.isValid, let conflict = RouteConflicts.firstConflict(in: routes) {
            let a = routes[conflict.first], b = routes[conflict.second]
            reader.report(.ambiguousRoutes, at: routesPath.appending(index: conflict.second),
                          "ambiguous routes: \(JSONWriter.quoted(a.name)) (\(a.pattern)) and \(JSONWriter.quoted(b.name)) (\(b.pattern)) both match \(JSONWriter.quoted(conflict.example)) and neither is more specific")
        }
        guard reader.isValid, let app, let hosts else { throw refusal() }
        return Loaded(app: app, hosts: hosts, passthroughQuery: passthrough, routes: routes, document: document)
    }

    /// Every problem recorded, the first carrying the rest.
    private func refusal() -> RouteTableError {
        let errors = reader.diagnostics.map {
            RouteTableError($0.code, source: reader.file, path: $0.location.path ?? .root, message: $0.message)
        }
        guard var first = errors.first else {
            return RouteTableError(source: reader.file, path: .root, message: "the table could not be read")  // unreachable: a problem was recorded
        }
        first.others = Array(errors.dropFirst())
        return first
    }

    /// The app's identity, each field checked on its own. `scheme` is optional: an app
    /// that opens https links only has none.
    private mutating func readApp(_ json: JSON, at path: JSONPath) -> AppIdentity? {
        guard let object = reader.object(json, at: path, required: ["teamId", "bundleId"], optional: ["scheme"]) else { return nil }
        let teamId = reader.string(object, "teamId", at: path) { AppleIdentifier.problem(with: $0, name: "team ID") }
        let bundleId = reader.string(object, "bundleId", at: path, validate: BundleID.problem(with:))
        let scheme = reader.string(object, "scheme", at: path) { scheme in
            let schemeOK = scheme.utf8.first.map { $0 >= 0x61 && $0 <= 0x7A } == true
                && scheme.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ASCII.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
            if !schemeOK { return "scheme \(JSONWriter.quoted(scheme)) must be lowercase [a-z][a-z0-9+.-]*" }
            if Self.reservedSchemes.contains(scheme) { return "scheme \(JSONWriter.quoted(scheme)) is not an app's own scheme" }
            return nil
        }
        // A scheme given but wrong was reported above.
        if object["scheme"] != nil && scheme == nil { return nil }
        guard let teamId, let bundleId else { return nil }
        return AppIdentity(teamId: teamId.value, bundleId: bundleId.value, scheme: scheme?.value)
    }

    private mutating func readHosts(_ json: JSON, at path: JSONPath) -> [String]? {
        guard let hosts = reader.strings(json, at: path, distinct: "host") else { return nil }
        if hosts.isEmpty {
            reader.report(.invalidValue, at: path, "there must be at least one host")
            return nil
        }
        var ok = true
        for (i, host) in hosts.enumerated() {
            if let problem = HostName.problem(with: host) {
                reader.report(.invalidValue, at: path.appending(index: i), "\(JSONWriter.quoted(host)): \(problem)")
                ok = false
            }
        }
        return ok ? hosts : nil
    }

    private mutating func readPassthrough(_ json: JSON, at path: JSONPath) -> [String]? {
        guard let keys = reader.strings(json, at: path, distinct: "query key") else { return nil }
        var ok = true
        for (i, key) in keys.enumerated() where !checkQueryKey(key, at: path.appending(index: i)) {
            ok = false
        }
        return ok ? keys : nil
    }

    /// False after reporting why `key` cannot be a query key.
    private mutating func checkQueryKey(_ key: String, at path: JSONPath) -> Bool {
        if !ASCII.isUnreservedText(key) || key.utf8.count > 64 {
            reader.report(.invalidValue, at: path, "query key \(JSONWriter.quoted(key)) must be 1–64 of A-Z a-z 0-9 - . _ ~")
            return false
        }
        if CredentialKeys.contains(key) {
            reader.report(.invalidValue, at: path, "query key \(JSONWriter.quoted(key)) names a credential; secrets do not belong in links")
            return false
        }
        return true
    }

    /// One route, or nil when any part of it is wrong (every such part is recorded).
    private mutating func readRoute(_ json: JSON, at path: JSONPath, passthrough: [String]) -> Route? {
        let before = reader.diagnostics.count
        guard let object = reader.object(json, at: path, required: ["name", "path"], optional: ["params", "query"]) else { return nil }
        let name = reader.string(object, "name", at: path) { name in
            ASCII.isIdentifier(name) || (ASCII.isUnreservedText(name) && ASCII.isAlpha(name.utf8.first ?? 0)) ? nil
                : "route name \(JSONWriter.quoted(name)) must start with a letter and use A-Z a-z 0-9 - . _ ~"
        }?.value
        let patternPath = path.appending("path")
        let pattern = reader.string(object, "path", at: path)?.value

        var params: [(name: String, type: ValueType)] = []
        var paramsRead = true
        if let json = object["params"] {
            let paramsPath = path.appending("params")
            if let members = json.objectValue?.members {
                for member in members {
                    if let type = reader.valueType(member.value, at: paramsPath.appending(member.key)) {
                        params.append((member.key, type))
                    } else {
                        paramsRead = false
                    }
                }
            } else {
                reader.report(.wrongType, at: paramsPath, "expected an object of parameter types, found \(json.kindDescription)")
                paramsRead = false
            }
        }
        var segments: [PathSegment]?
        if let pattern, paramsRead {
            switch PatternParser.parse(pattern, params: params) {
            case .success(let s): segments = s
            case .failure(.pattern(let message)):
                reader.report(.invalidPattern, at: patternPath, "pattern \(JSONWriter.quoted(pattern)) \(message)")
            case .failure(.undeclared(let param)):
                reader.report(.missing, at: patternPath, "pattern \(JSONWriter.quoted(pattern)) uses :\(param) but \"params\" gives it no type")
            case .failure(.unused(let param)):
                reader.report(.invalidValue, at: path.appending("params").appending(param), "parameter \(JSONWriter.quoted(param)) is not used in the pattern \(JSONWriter.quoted(pattern))")
            }
        }

        var query: [QueryParameter] = []
        if let json = object["query"] {
            let queryPath = path.appending("query")
            if let members = json.objectValue?.members {
                for member in members {
                    let keyPath = queryPath.appending(member.key)
                    guard checkQueryKey(member.key, at: keyPath) else { continue }
                    if passthrough.contains(member.key) {
                        reader.report(.invalidValue, at: keyPath, "query key \(JSONWriter.quoted(member.key)) is already in passthroughQuery")
                        continue
                    }
                    if let parameter = readQueryParameter(key: member.key, member.value, at: keyPath) { query.append(parameter) }
                }
            } else {
                reader.report(.wrongType, at: queryPath, "expected an object of query keys, found \(json.kindDescription)")
            }
        }
        guard reader.diagnostics.count == before, let name, let pattern, let segments else { return nil }
        return Route(name: name, pattern: pattern, segments: segments, query: query)
    }

    /// `"slug"`, `["a", "b"]`, or `{"type": …, "required": true}`.
    private mutating func readQueryParameter(key: String, _ json: JSON, at path: JSONPath) -> QueryParameter? {
        guard case .object = json else {
            return reader.valueType(json, at: path).map { QueryParameter(key: key, type: $0, required: false) }
        }
        guard let object = reader.object(json, at: path, required: ["type"], optional: ["required"]),
              let typeJSON = object["type"] else { return nil }
        let type = reader.valueType(typeJSON, at: path.appending("type"))
        let required = object["required"].map { reader.bool($0, at: path.appending("required")) } ?? false
        guard let type, let required else { return nil }
        return QueryParameter(key: key, type: type, required: required)
    }
}

extension ConfigReader {
    /// A route parameter's type: `"int"`, `"uuid"`, `"slug"`, `"string"` or a list of
    /// allowed values; nil after reporting why not.
    mutating func valueType(_ json: JSON, at path: JSONPath) -> ValueType? {
        switch json {
        case .string(let name):
            switch name {
            case "int": return .int
            case "uuid": return .uuid
            case "slug": return .slug
            case "string": return .string
            default:
                report(.invalidValue, at: path, "unknown type \(JSONWriter.quoted(name)) (expected \"int\", \"uuid\", \"slug\", \"string\" or a list of allowed values)")
                return nil
            }
        case .array:
            guard let values = strings(json, at: path, distinct: "allowed value") else { return nil }
            if values.isEmpty {
                report(.invalidValue, at: path, "the list of allowed values is empty")
                return nil
            }
            var ok = true
            for (i, value) in values.enumerated() where !ValueType.string.accepts(value) || value.contains("/") || value.contains("\\") {
                report(.invalidValue, at: path.appending(index: i),
                       "allowed value \(JSONWriter.quoted(value)) must be 1–256 characters with no whitespace, control, format characters, '/' or '\\'")
                ok = false
            }
            return ok ? .oneOf(values) : nil
        default:
            report(.wrongType, at: path, "expected a type name or a list of allowed values, found \(json.kindDescription)")
            return nil
        }
    }
}
