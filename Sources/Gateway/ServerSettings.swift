import HTTPServer
import StrictJSON

/// A configuration problem: where in the file and what was expected.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: JSONPath
    public var message: String

    public init(path: JSONPath, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "at \(path): \(message)" }
}

/// The `server` section of `config/gateway.json`.
public struct ServerSettings: Sendable {
    public var http: HTTPServerConfiguration
    public var shutdownDeadlineSeconds: Double
    public var apiKeys: [APIKey]
    public var defaultRateLimit: RateLimit?
    /// Where the JSON request log goes: "stderr" (default), "stdout" or "off".
    public var requestLog: String

    public init(http: HTTPServerConfiguration = HTTPServerConfiguration(), shutdownDeadlineSeconds: Double = 10,
                apiKeys: [APIKey] = [], defaultRateLimit: RateLimit? = nil, requestLog: String = "stderr") {
        self.http = http
        self.shutdownDeadlineSeconds = shutdownDeadlineSeconds
        self.apiKeys = apiKeys
        self.defaultRateLimit = defaultRateLimit
        self.requestLog = requestLog
    }

    static let keys: Set<String> = ["listen", "maxBodyBytes", "connectionLimit", "perIPConnectionLimit",
                                    "connectionTimeoutSeconds", "threads", "shutdownDeadlineSeconds",
                                    "apiKeys", "rateLimit", "requestLog"]

    /// Parses the section; `nil` gives the defaults. Every problem is reported at once.
    public init(json: JSON?, path: JSONPath = JSONPath.root.appending("server")) throws(SettingsErrors) {
        self.init()
        guard let json else { return }
        var errors: [SettingsError] = []
        guard let object = json.objectValue else {
            throw SettingsErrors([SettingsError(path: path, message: "expected an object, got \(json.kindDescription)")])
        }
        for key in object.keys where !Self.keys.contains(key) {
            errors.append(SettingsError(path: path.appending(key), message: "unknown key; expected one of \(Self.keys.sorted().joined(separator: ", "))"))
        }
        if let listen = object["listen"] {
            if let text = listen.stringValue, let (host, port) = Self.parseListen(text) {
                http.host = host
                http.port = port
            } else {
                errors.append(SettingsError(path: path.appending("listen"), message: "expected \"HOST:PORT\" with an IP literal, e.g. \"127.0.0.1:8080\" or \"[::1]:8080\""))
            }
        }
        func integer(_ key: String, _ range: ClosedRange<Int>, _ apply: (Int) -> Void) {
            guard let value = object[key] else { return }
            if let n = value.int64Value, range.contains(Int(n)) { apply(Int(n)) } else {
                errors.append(SettingsError(path: path.appending(key), message: "expected an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
        }
        integer("maxBodyBytes", 1024...(256 << 20)) { http.maxBodyBytes = $0 }
        integer("connectionLimit", 1...100_000) { http.connectionLimit = $0 }
        integer("perIPConnectionLimit", 1...100_000) { http.perIPConnectionLimit = $0 }
        integer("connectionTimeoutSeconds", 1...3600) { http.connectionTimeoutSeconds = $0 }
        integer("threads", 1...256) { http.threads = $0 }
        if let deadline = object["shutdownDeadlineSeconds"] {
            if let d = deadline.doubleValue, d >= 0, d <= 3600 { shutdownDeadlineSeconds = d } else {
                errors.append(SettingsError(path: path.appending("shutdownDeadlineSeconds"), message: "expected seconds from 0 to 3600"))
            }
        }
        if let log = object["requestLog"] {
            if let text = log.stringValue, ["stderr", "stdout", "off"].contains(text) { requestLog = text } else {
                errors.append(SettingsError(path: path.appending("requestLog"), message: "expected \"stderr\", \"stdout\" or \"off\""))
            }
        }
        if let limit = object["rateLimit"] {
            switch Self.parseRateLimit(limit, path: path.appending("rateLimit")) {
            case .success(let parsed): defaultRateLimit = parsed
            case .failure(let error): errors.append(error)
            }
        }
        if let keysJSON = object["apiKeys"] {
            if let array = keysJSON.arrayValue {
                var names = Set<String>()
                for (i, item) in array.enumerated() {
                    let itemPath = path.appending("apiKeys").appending(index: i)
                    switch Self.parseKey(item, path: itemPath) {
                    case .success(let key):
                        if !names.insert(key.name).inserted {
                            errors.append(SettingsError(path: itemPath.appending("name"), message: "duplicate key name \(JSONWriter.quoted(key.name))"))
                        }
                        apiKeys.append(key)
                    case .failure(let keyErrors): errors += keyErrors.errors
                    }
                }
            } else {
                errors.append(SettingsError(path: path.appending("apiKeys"), message: "expected an array of {name, sha256, rateLimit?}"))
            }
        }
        if errors.isEmpty && apiKeys.isEmpty && !http.isLoopback {
            errors.append(SettingsError(path: path.appending("listen"),
                                        message: "refusing to listen on \(http.host), which is not loopback, with no apiKeys configured"))
        }
        if !errors.isEmpty { throw SettingsErrors(errors) }
    }

    static func parseListen(_ text: String) -> (String, Int)? {
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

    static func parseRateLimit(_ json: JSON, path: JSONPath) -> Result<RateLimit, SettingsError> {
        guard let object = json.objectValue, Set(object.keys).isSubset(of: ["perSecond", "burst"]),
              let perSecond = object["perSecond"]?.doubleValue, perSecond > 0,
              let burst = object["burst"]?.doubleValue ?? object["perSecond"]?.doubleValue, burst >= 1 else {
            return .failure(SettingsError(path: path, message: "expected {\"perSecond\": > 0, \"burst\": >= 1}"))
        }
        return .success(RateLimit(perSecond: perSecond, burst: burst))
    }

    static func parseKey(_ json: JSON, path: JSONPath) -> Result<APIKey, SettingsErrors> {
        guard let object = json.objectValue else {
            return .failure(SettingsErrors([SettingsError(path: path, message: "expected an object {name, sha256, rateLimit?}")]))
        }
        var errors: [SettingsError] = []
        for key in object.keys where !["name", "sha256", "rateLimit"].contains(key) {
            errors.append(SettingsError(path: path.appending(key), message: "unknown key; expected name, sha256 or rateLimit"))
        }
        let name = object["name"]?.stringValue ?? ""
        if name.isEmpty || name.utf8.count > 64 || !name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            errors.append(SettingsError(path: path.appending("name"), message: "expected a name of 1-64 printable ASCII characters"))
        }
        let hash = object["sha256"]?.stringValue ?? ""
        if hash.utf8.count != 64 || !hash.allSatisfy({ $0.isHexDigit }) {
            errors.append(SettingsError(path: path.appending("sha256"), message: "expected the key's SHA-256 as 64 hex digits (pushgate hash-key prints it)"))
        }
        var limit: RateLimit?
        if let limitJSON = object["rateLimit"] {
            switch parseRateLimit(limitJSON, path: path.appending("rateLimit")) {
            case .success(let parsed): limit = parsed
            case .failure(let error): errors.append(error)
            }
        }
        if !errors.isEmpty { return .failure(SettingsErrors(errors)) }
        return .success(APIKey(name: name, sha256: hash, rateLimit: limit))
    }
}

public struct SettingsErrors: Error, Sendable, Equatable {
    public var errors: [SettingsError]
    public init(_ errors: [SettingsError]) { self.errors = errors }
}
