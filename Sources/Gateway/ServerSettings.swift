import HTTPServer
import StrictJSON

/// The `server` section of `config/gateway.json`.
public struct ServerSettings: Sendable {
    public var http: HTTPServerConfiguration
    public var shutdownDeadlineSeconds: Double
    public var apiKeys: [APIKey]
    public var defaultRateLimit: RateLimit?
    /// Failed authentication attempts allowed per client address before wrong keys are
    /// answered 429.
    public var failedAuthenticationLimit = GatewayService.authFailureLimit
    /// Where the JSON request log goes: "stderr" (default), "stdout" or "off".
    public var requestLog: String
    /// Every log line as one JSON object (default) or as text.
    public var logFormat: RequestLog.Format = .json
    /// Lines below this level are not written (requests: 5xx error, 4xx warn, else info).
    public var logLevel: RequestLog.Level = .info
    /// `/metrics` and `/readyz` name every app, key id and upstream URL: with this (and
    /// keys configured) they need an admin key, like the rest of the API.
    public var privateProbes = false
    /// Peers whose `Forwarded` / `X-Forwarded-For` name the client (default none).
    public var trustedProxies: TrustedProxies = .none

    public init(http: HTTPServerConfiguration = HTTPServerConfiguration(), shutdownDeadlineSeconds: Double = 10,
                apiKeys: [APIKey] = [], defaultRateLimit: RateLimit? = nil, requestLog: String = "stderr") {
        self.http = http
        self.shutdownDeadlineSeconds = shutdownDeadlineSeconds
        self.apiKeys = apiKeys
        self.defaultRateLimit = defaultRateLimit
        self.requestLog = requestLog
    }

    public static let keys = ["listen", "maxBodyBytes", "connectionLimit", "perIPConnectionLimit",
                              "connectionTimeoutSeconds", "threads", "workers", "workerQueue", "upstreamWorkers", "upstreamQueue", "shutdownDeadlineSeconds",
                              "apiKeys", "rateLimit", "requestLog", "logFormat", "logLevel", "privateProbes", "trustedProxies", "failedAuthenticationLimit"]

    /// Reads the section into `reader` (absent: the defaults); every problem is collected.
    public init(_ json: JSON?, reader: inout ConfigReader, at path: JSONPath = JSONPath.root.appending("server")) {
        self.init()
        let object = reader.section(json, at: path, keys: Self.keys)
        if let listen = reader.string(object, "listen", at: path, default: "\(http.host):\(http.port)", validate: Self.listenProblem),
           let (host, port) = Self.parseListen(listen.value) {
            http.host = host
            http.port = port
        }
        func integer(_ key: String, _ range: ClosedRange<Int>, _ value: Int) -> Int {
            reader.integer(object, key, at: path, in: range, default: value) ?? value
        }
        http.maxBodyBytes = integer("maxBodyBytes", 1024...(256 << 20), http.maxBodyBytes)
        http.connectionLimit = integer("connectionLimit", 1...100_000, http.connectionLimit)
        http.perIPConnectionLimit = integer("perIPConnectionLimit", 1...100_000, http.perIPConnectionLimit)
        http.connectionTimeoutSeconds = integer("connectionTimeoutSeconds", 1...3600, http.connectionTimeoutSeconds)
        http.threads = integer("threads", 1...256, http.threads)
        http.workers = integer("workers", 1...256, http.workers)
        http.workerQueue = integer("workerQueue", 0...100_000, http.workerQueue)
        http.upstreamWorkers = integer("upstreamWorkers", 1...256, http.upstreamWorkers)
        http.upstreamQueue = integer("upstreamQueue", 0...100_000, http.upstreamQueue)
        shutdownDeadlineSeconds = reader.number(object, "shutdownDeadlineSeconds", at: path, in: 0...3600,
                                                default: shutdownDeadlineSeconds) ?? shutdownDeadlineSeconds
        requestLog = reader.choice(object, "requestLog", at: path, ["stderr", "stdout", "off"], default: requestLog)
        logFormat = RequestLog.Format(rawValue: reader.choice(object, "logFormat", at: path, RequestLog.Format.allCases.map(\.rawValue),
                                                              default: logFormat.rawValue)) ?? logFormat
        logLevel = RequestLog.Level(rawValue: reader.choice(object, "logLevel", at: path, RequestLog.Level.allCases.map(\.rawValue),
                                                            default: logLevel.rawValue)) ?? logLevel
        privateProbes = reader.bool(object, "privateProbes", at: path, default: privateProbes)
        if object["rateLimit"] != nil || reader.environment.keys.contains(where: { $0.hasPrefix(ConfigReader.variableName(for: path.appending("rateLimit"))) }) {
            defaultRateLimit = Self.readRateLimit(object["rateLimit"], reader: &reader, at: path.appending("rateLimit"))
        }
        let failedPath = path.appending("failedAuthenticationLimit")
        if object["failedAuthenticationLimit"] != nil || reader.environment.keys.contains(where: { $0.hasPrefix(ConfigReader.variableName(for: failedPath)) }) {
            failedAuthenticationLimit = Self.readRateLimit(object["failedAuthenticationLimit"], reader: &reader, at: failedPath) ?? failedAuthenticationLimit
        }
        if let keys = reader.json(object, "apiKeys", at: path, secret: true) {
            apiKeys = Self.readKeys(keys, reader: &reader, at: path.appending("apiKeys"))
        }
        let proxiesPath = path.appending("trustedProxies")
        if let proxies = reader.json(object, "trustedProxies", at: path) {
            trustedProxies = Self.readTrustedProxies(proxies, reader: &reader, at: proxiesPath)
        } else {
            reader.record(proxiesPath, .array([]), origin: .defaultValue)
        }
    }

    /// `["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]`: each an IPv4 or IPv6 address or a
    /// CIDR range whose bits past the prefix are zero; no repeats.
    static func readTrustedProxies(_ setting: ConfigReader.Setting<JSON>, reader: inout ConfigReader, at path: JSONPath) -> TrustedProxies {
        guard let items = setting.value.arrayValue else {
            reader.report(.wrongType, at: setting.location,
                          "expected an array of addresses and CIDR ranges (\"10.0.0.0/8\", \"2001:db8::/32\"), found \(setting.value.kindDescription)")
            return .none
        }
        // Values from the variable are blamed on the variable.
        func place(_ i: Int) -> DiagnosticLocation { setting.origin == .file ? reader.location(path.appending(index: i)) : setting.location }
        var ranges: [IPAddressRange] = []
        for (i, item) in items.enumerated() {
            guard let text = item.stringValue else {
                reader.report(.wrongType, at: place(i), "item \(i): expected an address or CIDR range as a string, found \(item.kindDescription)")
                continue
            }
            switch IPAddressRange.parse(text) {
            case .failure(let error):
                reader.report(.invalidValue, at: place(i), "item \(i): \(error.message) (expected an IPv4 or IPv6 address or CIDR range, e.g. \"10.0.0.0/8\" or \"2001:db8::/32\")")
            case .success(let range) where range.prefixBits == 0 || range.prefixBits == 96 && range.base.isIPv4:
                reader.report(.invalidValue, at: place(i), "item \(i): \(range) trusts every address, so any client could name its own; list the proxies' addresses")
            case .success(let range):
                if ranges.contains(range) {
                    reader.report(.invalidValue, at: place(i), "item \(i): \(range) is listed twice")
                } else {
                    ranges.append(range)
                }
            }
        }
        reader.record(path, .array(ranges.map { .string($0.description) }), origin: setting.origin)
        return TrustedProxies(ranges)
    }

    /// Why the server must not start as configured: a non-loopback address with no keys.
    public var exposureProblem: String? {
        guard apiKeys.isEmpty else { return nil }
        if !http.isLoopback { return "refusing to listen on \(http.host), which is not loopback, with no apiKeys configured" }
        // A proxy in front carries other machines' requests: keys are the only guard then.
        if trustedProxies != .none { return "refusing trustedProxies with no apiKeys configured: behind a proxy every request may come from anywhere" }
        return nil
    }

    public static func listenProblem(_ text: String) -> String? {
        parseListen(text) == nil ? "expected \"HOST:PORT\" with an IP literal, e.g. \"127.0.0.1:8080\" or \"[::1]:8080\", not \(JSONWriter.quoted(text))" : nil
    }

    public static func parseListen(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let isIPv4 = host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { UInt8($0) != nil }
        let isIPv6 = host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        guard isIPv4 || isIPv6 || host == "localhost" else { return nil }
        return (host, port)
    }

    /// `{"perSecond": > 0, "burst": >= 1}` (burst defaults to perSecond).
    static func readRateLimit(_ json: JSON?, reader: inout ConfigReader, at path: JSONPath) -> RateLimit? {
        let object = reader.section(json, at: path, keys: ["perSecond", "burst"])
        let before = reader.diagnostics.count
        guard let perSecond = reader.number(object, "perSecond", at: path, in: 0.001...1_000_000, default: nil) else {
            if reader.diagnostics.count == before { reader.report(.missing, at: path.appending("perSecond"), "expected perSecond (tokens per second, > 0)") }
            return nil
        }
        let burst = reader.number(object, "burst", at: path, in: 1...10_000_000, default: max(1, perSecond)) ?? max(1, perSecond)
        return RateLimit(perSecond: perSecond, burst: burst)
    }

    /// `[{"name", "sha256", "rateLimit"?}, …]`; the hashes are redacted in `config print`.
    static func readKeys(_ setting: ConfigReader.Setting<JSON>, reader: inout ConfigReader, at path: JSONPath) -> [APIKey] {
        guard let array = setting.value.arrayValue else {
            reader.report(.wrongType, at: setting.location, "expected an array of {name, sha256, rateLimit?, apps?, role?}, found \(setting.value.kindDescription)")
            return []
        }
        var keys: [APIKey] = []
        var shown: [JSON] = []
        for (i, item) in array.enumerated() {
            let itemPath = path.appending(index: i)
            // Values from the variable are blamed on the variable.
            func place(_ p: JSONPath) -> DiagnosticLocation { setting.origin == .file ? reader.location(p) : setting.location }
            guard let object = item.objectValue else {
                reader.report(.wrongType, at: place(itemPath), "expected an object {name, sha256, rateLimit?, apps?, role?}, found \(item.kindDescription)")
                continue
            }
            // The one reader's rules, on a reader of its own (no overrides inside a list
            // item), whose problems are then placed like the others.
            func adopt(_ scratch: ConfigReader) {
                for d in scratch.diagnostics { reader.report(d.code, at: place(d.location.path ?? itemPath), d.message) }
            }
            var members = ConfigReader(document: reader.file)
            members.rejectUnknownKeys(object, at: itemPath, keys: ["name", "sha256", "rateLimit", "apps", "role"])
            adopt(members)
            let name = object["name"]?.stringValue ?? ""
            if name.isEmpty || name.utf8.count > 64 || !name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                reader.report(object["name"] == nil ? .missing : .invalidValue, at: place(itemPath.appending("name")),
                              "expected a name of 1-64 printable ASCII characters")
            } else if keys.contains(where: { $0.name == name }) {
                reader.report(.invalidValue, at: place(itemPath.appending("name")), "duplicate key name \(JSONWriter.quoted(name))")
            }
            let hash = object["sha256"]?.stringValue ?? ""
            if hash.utf8.count != 64 || !hash.allSatisfy({ $0.isHexDigit }) {
                reader.report(object["sha256"] == nil ? .missing : .invalidValue, at: place(itemPath.appending("sha256")),
                              "expected the key's SHA-256 as 64 hex digits (pushgate hash-key prints it)")
            }
            var limit: RateLimit?
            if let limitJSON = object["rateLimit"] {
                var scratch = ConfigReader(document: reader.file)
                limit = readRateLimit(limitJSON, reader: &scratch, at: itemPath.appending("rateLimit"))
                adopt(scratch)
            }
            // Which apps the key may use (every app when absent), and whether it is an admin.
            var apps: [String]?
            if let list = object["apps"] {
                let names = list.arrayValue?.compactMap(\.stringValue)
                if let names, names.count == list.arrayValue?.count, !names.isEmpty {
                    apps = names
                } else {
                    reader.report(list.arrayValue == nil ? .wrongType : .invalidValue, at: place(itemPath.appending("apps")),
                                  "expected a non-empty list of app names (leave \"apps\" out for every app), found \(list.kindDescription)")
                }
            }
            var isAdmin = false
            if let role = object["role"] {
                switch role.stringValue {
                case "admin": isAdmin = true
                case "client": isAdmin = false
                default:
                    reader.report(role.stringValue == nil ? .wrongType : .invalidValue, at: place(itemPath.appending("role")),
                                  "expected \"client\" (the key sees only its own campaigns) or \"admin\" (every key's), found \(role.stringValue.map { JSONWriter.quoted($0) } ?? role.kindDescription)")
                }
                if isAdmin && apps != nil {
                    reader.report(.conflictingFields, at: place(itemPath.appending("apps")), "an admin key sees every app; leave \"apps\" out")
                }
            }
            keys.append(APIKey(name: name, sha256: hash, rateLimit: limit, apps: apps, isAdmin: isAdmin))
            var entry: [JSONMember] = [JSONMember(key: "name", value: .string(name)), JSONMember(key: "sha256", value: .string("(redacted)"))]
            if let apps { entry.append(JSONMember(key: "apps", value: .array(apps.map { .string($0) }))) }
            if isAdmin { entry.append(JSONMember(key: "role", value: .string("admin"))) }
            if let limit {
                entry.append(JSONMember(key: "rateLimit", value: .object(JSONObject([
                    JSONMember(key: "perSecond", value: .number(String(limit.perSecond))),
                    JSONMember(key: "burst", value: .number(String(limit.burst))),
                ]))))
            }
            shown.append(.object(JSONObject(entry)))
        }
        reader.record(path, .array(shown), origin: setting.origin)
        return keys
    }
}
