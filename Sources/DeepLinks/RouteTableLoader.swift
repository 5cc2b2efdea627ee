import StrictJSON

/// Reads a route table document, checking every key, type, pattern and name, then the
/// table as a whole for conflicting routes.
struct RouteTableLoader {
    let reader: TableReader

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
    func load(_ bytes: [UInt8]) throws(RouteTableError) -> Loaded {
        let document: JSON
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            throw reader.error(error.path, "invalid JSON: line \(error.line), column \(error.column): \(error.message)", error.code.diagnosticCode)
        }
        let root = JSONPath.root
        let top = try reader.object(document, at: root, required: ["app", "hosts", "routes"],
                                    optional: ["passthroughQuery"])
        let app = top["app"].flatMap { json in reader.collect { () throws(RouteTableError) in try readApp(json, at: root.appending("app")) } } ?? nil
        let hosts = top["hosts"].flatMap { json in reader.collect { () throws(RouteTableError) in try readHosts(json, at: root.appending("hosts")) } }
        let passthrough = top["passthroughQuery"].map { json in
            reader.collect { () throws(RouteTableError) in try readPassthrough(json, at: root.appending("passthroughQuery")) } ?? []
        } ?? []
        let routesPath = root.appending("routes")
        var routes: [Route] = []
        var indices: [Int] = []  // each route's place in the file (routes that failed are skipped)
        if let json = top["routes"], let routeList = reader.collect({ () throws(RouteTableError) in try reader.array(json, at: routesPath) }) {
            if routeList.isEmpty { reader.record(reader.error(routesPath, "there must be at least one route")) }
            for (i, json) in routeList.enumerated() {
                guard let route = readRoute(json, at: routesPath.appending(index: i), passthrough: passthrough) else { continue }
                if let earlier = routes.firstIndex(where: { $0.name == route.name }) {
                    reader.record(reader.error(routesPath.appending(index: i).appending("name"),
                                               "duplicate route name \(JSONWriter.quoted(route.name)) (also routes[\(indices[earlier])])"))
                    continue
                }
                routes.append(route)
                indices.append(i)
            }
        }
        if reader.problems.list.isEmpty, let conflict = RouteConflicts.firstConflict(in: routes) {
            let a = routes[conflict.first], b = routes[conflict.second]
            reader.record(reader.error(routesPath.appending(index: conflict.second),
                                       "ambiguous routes: \(JSONWriter.quoted(a.name)) (\(a.pattern)) and \(JSONWriter.quoted(b.name)) (\(b.pattern)) both match \(JSONWriter.quoted(conflict.example)) and neither is more specific", .ambiguousRoutes))
        }
        if var first = reader.problems.list.first {
            first.others = Array(reader.problems.list.dropFirst())
            throw first
        }
        guard let app, let hosts else { throw reader.error(root, "the table could not be read") }  // unreachable: recorded above
        return Loaded(app: app, hosts: hosts, passthroughQuery: passthrough, routes: routes, document: document)
    }

    /// The app's identity, each field checked on its own. `scheme` is optional: an app
    /// that opens https links only has none.
    private func readApp(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> AppIdentity? {
        let object = try reader.object(json, at: path, required: ["teamId", "bundleId"], optional: ["scheme"])
        let teamId = object["teamId"].flatMap { json in reader.collect { () throws(RouteTableError) -> String in
            let teamId = try reader.string(json, at: path.appending("teamId"))
            let teamOK = teamId.utf8.count == 10
                && teamId.utf8.allSatisfy { ASCII.isDigit($0) || ($0 >= 0x41 && $0 <= 0x5A) }
            if !teamOK {
                throw reader.error(path.appending("teamId"), "team ID \(JSONWriter.quoted(teamId)) must be 10 characters of A-Z and 0-9")
            }
            return teamId
        } }
        let bundleId = object["bundleId"].flatMap { json in reader.collect { () throws(RouteTableError) -> String in
            let bundleId = try reader.string(json, at: path.appending("bundleId"))
            if let problem = BundleID.problem(with: bundleId) {
                throw reader.error(path.appending("bundleId"), problem)
            }
            return bundleId
        } }
        let scheme: String?? = object["scheme"].map { json in reader.collect { () throws(RouteTableError) -> String in
            let scheme = try reader.string(json, at: path.appending("scheme"))
            let schemeOK = scheme.utf8.first.map { $0 >= 0x61 && $0 <= 0x7A } == true
                && scheme.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ASCII.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
            if !schemeOK {
                throw reader.error(path.appending("scheme"), "scheme \(JSONWriter.quoted(scheme)) must be lowercase [a-z][a-z0-9+.-]*")
            }
            if Self.reservedSchemes.contains(scheme) {
                throw reader.error(path.appending("scheme"), "scheme \(JSONWriter.quoted(scheme)) is not an app's own scheme")
            }
            return scheme
        } }
        // `scheme` is nil when absent and `.some(nil)` when given but wrong (recorded above).
        if case .some(.none) = scheme { return nil }
        guard let teamId, let bundleId else { return nil }
        return AppIdentity(teamId: teamId, bundleId: bundleId, scheme: scheme ?? nil)
    }

    private func readHosts(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> [String] {
        let hosts = try reader.stringList(json, at: path, what: "host")
        if hosts.isEmpty { throw reader.error(path, "there must be at least one host") }
        for (i, host) in hosts.enumerated() {
            if let problem = HostName.problem(with: host) {
                throw reader.error(path.appending(index: i), "\(JSONWriter.quoted(host)): \(problem)")
            }
        }
        return hosts
    }

    private func readPassthrough(_ json: JSON, at path: JSONPath) throws(RouteTableError) -> [String] {
        let keys = try reader.stringList(json, at: path, what: "query key")
        for (i, key) in keys.enumerated() {
            try checkQueryKey(key, at: path.appending(index: i))
        }
        return keys
    }

    private func checkQueryKey(_ key: String, at path: JSONPath) throws(RouteTableError) {
        if !ASCII.isUnreservedText(key) || key.utf8.count > 64 {
            throw reader.error(path, "query key \(JSONWriter.quoted(key)) must be 1–64 of A-Z a-z 0-9 - . _ ~")
        }
        if CredentialKeys.contains(key) {
            throw reader.error(path, "query key \(JSONWriter.quoted(key)) names a credential; secrets do not belong in links")
        }
    }

    /// One route, or nil when any part of it is wrong (every such part is recorded).
    private func readRoute(_ json: JSON, at path: JSONPath, passthrough: [String]) -> Route? {
        let before = reader.problems.list.count
        guard let object = reader.collect({ () throws(RouteTableError) in
            try reader.object(json, at: path, required: ["name", "path"], optional: ["params", "query"])
        }) else { return nil }
        let name = object["name"].flatMap { json in reader.collect { () throws(RouteTableError) -> String in
            let name = try reader.string(json, at: path.appending("name"))
            if !ASCII.isIdentifier(name) && !(ASCII.isUnreservedText(name) && ASCII.isAlpha(name.utf8.first ?? 0)) {
                throw reader.error(path.appending("name"), "route name \(JSONWriter.quoted(name)) must start with a letter and use A-Z a-z 0-9 - . _ ~")
            }
            return name
        } }
        let patternPath = path.appending("path")
        let pattern = object["path"].flatMap { json in reader.collect { () throws(RouteTableError) in try reader.string(json, at: patternPath) } }

        var params: [(name: String, type: ValueType)] = []
        var paramsRead = true
        if let json = object["params"] {
            let paramsPath = path.appending("params")
            if let members = json.objectValue?.members {
                for member in members {
                    if let type = reader.collect({ () throws(RouteTableError) in try reader.valueType(member.value, at: paramsPath.appending(member.key)) }) {
                        params.append((member.key, type))
                    } else {
                        paramsRead = false
                    }
                }
            } else {
                reader.record(reader.error(paramsPath, "expected an object of parameter types, found \(json.kindDescription)", .wrongType))
                paramsRead = false
            }
        }
        var segments: [PathSegment]?
        if let pattern, paramsRead {
            switch PatternParser.parse(pattern, params: params) {
            case .success(let s): segments = s
            case .failure(.pattern(let message)):
                reader.record(reader.error(patternPath, "pattern \(JSONWriter.quoted(pattern)) \(message)", .invalidPattern))
            case .failure(.undeclared(let param)):
                reader.record(reader.error(patternPath, "pattern \(JSONWriter.quoted(pattern)) uses :\(param) but \"params\" gives it no type", .missing))
            case .failure(.unused(let param)):
                reader.record(reader.error(path.appending("params").appending(param), "parameter \(JSONWriter.quoted(param)) is not used in the pattern \(JSONWriter.quoted(pattern))"))
            }
        }

        var query: [QueryParameter] = []
        if let json = object["query"] {
            let queryPath = path.appending("query")
            if let members = json.objectValue?.members {
                for member in members {
                    let keyPath = queryPath.appending(member.key)
                    let parameter = reader.collect { () throws(RouteTableError) -> QueryParameter in
                        try checkQueryKey(member.key, at: keyPath)
                        if passthrough.contains(member.key) {
                            throw reader.error(keyPath, "query key \(JSONWriter.quoted(member.key)) is already in passthroughQuery")
                        }
                        return try readQueryParameter(key: member.key, member.value, at: keyPath)
                    }
                    if let parameter { query.append(parameter) }
                }
            } else {
                reader.record(reader.error(queryPath, "expected an object of query keys, found \(json.kindDescription)", .wrongType))
            }
        }
        guard reader.problems.list.count == before, let name, let pattern, let segments else { return nil }
        return Route(name: name, pattern: pattern, segments: segments, query: query)
    }

    /// `"slug"`, `["a", "b"]`, or `{"type": …, "required": true}`.
    private func readQueryParameter(key: String, _ json: JSON, at path: JSONPath) throws(RouteTableError) -> QueryParameter {
        guard case .object = json else {
            return QueryParameter(key: key, type: try reader.valueType(json, at: path), required: false)
        }
        let object = try reader.object(json, at: path, required: ["type"], optional: ["required"])
        let type = try reader.valueType(object["type"] ?? .null, at: path.appending("type"))
        let required = try object["required"].map { json throws(RouteTableError) in
            try reader.bool(json, at: path.appending("required"))
        } ?? false
        return QueryParameter(key: key, type: type, required: required)
    }
}
