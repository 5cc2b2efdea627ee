import APNsCore
import DeepLinks
import StrictJSON

extension APNsConfiguration {
    public static let keys = ["environment", "environments", "url", "manageURL", "caFile", "teamId", "keyId", "keyFile", "topic",
                              "connections", "transportThreads", "maxConcurrentStreams", "requestTimeoutSeconds", "retry", "dryRun"]

    /// Reads the `apns` section into `reader` (every problem collected there, each at the
    /// file's pointer or at the `PUSHGATE_APNS_*` variable that gave the value). Credentials
    /// are not required here: `requireCredentials` checks them for the commands that send.
    public static func read(_ json: JSON?, reader: inout ConfigReader,
                            at path: JSONPath = JSONPath.root.appending("apns")) -> APNsConfiguration {
        let object = reader.section(json, at: path, keys: keys)
        var config = APNsConfiguration()
        let environment = reader.choice(object, "environment", at: path, ["sandbox", "production"], default: config.environment.rawValue)
        config.environment = APNsEnvironment(rawValue: environment) ?? config.environment
        config.environments = readEnvironments(object, reader: &reader, at: path, default: config.environment)
        config.dryRun = reader.bool(object, "dryRun", at: path, default: false)
        config.url = reader.string(object, "url", at: path, validate: urlProblem)?.value.trimmingTrailingSlashes
        config.manageURL = reader.string(object, "manageURL", at: path, validate: urlProblem)?.value.trimmingTrailingSlashes
        if let ca = reader.path(object, "caFile", at: path) {
            if config.url?.hasPrefix("https://") == true || config.manageURL?.hasPrefix("https://") == true { config.caFile = ca.value } else {
                reader.report(.invalidValue, at: ca.location, "caFile only applies to an https:// url override")
            }
        }
        config.teamId = reader.string(object, "teamId", at: path) { identifierProblem($0, name: "teamId") }?.value
        config.keyId = reader.string(object, "keyId", at: path) { identifierProblem($0, name: "keyId") }?.value
        config.keyFile = reader.path(object, "keyFile", at: path)?.value
        config.topic = reader.string(object, "topic", at: path, validate: topicProblem)?.value
        config.connections = reader.integer(object, "connections", at: path, in: 1...64, default: config.connections) ?? config.connections
        config.transportThreads = reader.integer(object, "transportThreads", at: path, in: 1...64,
                                                 default: config.transportThreads) ?? config.transportThreads
        config.maxConcurrentStreams = reader.integer(object, "maxConcurrentStreams", at: path, in: 1...1000,
                                                     default: config.maxConcurrentStreams) ?? config.maxConcurrentStreams
        config.requestTimeoutSeconds = reader.number(object, "requestTimeoutSeconds", at: path, in: 0.05...600,
                                                     default: config.requestTimeoutSeconds) ?? config.requestTimeoutSeconds
        config.retry = readRetry(object["retry"], reader: &reader, at: path.appending("retry"))
        return config
    }

    /// What an app may set for itself in `apps.NAME.apns`; everything else about APNs is
    /// common to every app.
    public static let appKeys = ["environment", "environments", "teamId", "keyId", "keyFile", "topic"]

    /// `common` with an app's own `apps.NAME.apns` settings applied: its environment(s),
    /// credentials and `apns-topic` override. A setting the app does not give is inherited
    /// from `common`.
    public static func read(app json: JSON?, inheriting common: APNsConfiguration, reader: inout ConfigReader,
                            at path: JSONPath) -> APNsConfiguration {
        let object = reader.section(json, at: path, keys: appKeys)
        var config = common
        if let environment = reader.string(object, "environment", at: path, validate: { value in
            APNsEnvironment(rawValue: value) == nil ? "expected \(ConfigReader.list(APNsEnvironment.allCases.map(\.rawValue))), not \(TextSafety.quoted(value))" : nil
        }), let value = APNsEnvironment(rawValue: environment.value) {
            config.environment = value
            // A new default environment brings its own list unless the app gives one.
            config.environments = [value]
        }
        if object["environments"] != nil || reader.environment[ConfigReader.variableName(for: path.appending("environments"))] != nil {
            config.environments = readEnvironments(object, reader: &reader, at: path, default: config.environment)
        } else if !config.environments.contains(config.environment) {
            config.environments = [config.environment]
        }
        if let team = reader.string(object, "teamId", at: path, validate: { identifierProblem($0, name: "teamId") }) { config.teamId = team.value }
        if let key = reader.string(object, "keyId", at: path, validate: { identifierProblem($0, name: "keyId") }) { config.keyId = key.value }
        if let file = reader.path(object, "keyFile", at: path) { config.keyFile = file.value }
        if let topic = reader.string(object, "topic", at: path, validate: topicProblem) { config.topic = topic.value }
        return config
    }

    /// `environments`: a non-empty list of distinct environment names that includes the
    /// default `environment`.
    static func readEnvironments(_ object: JSONObject, reader: inout ConfigReader, at path: JSONPath,
                                 default environment: APNsEnvironment) -> [APNsEnvironment] {
        guard let setting = reader.json(object, "environments", at: path) else { return [environment] }
        let names = APNsEnvironment.allCases.map(\.rawValue)
        guard let items = setting.value.arrayValue, !items.isEmpty else {
            reader.report(.wrongType, at: setting.location, "expected a non-empty list of environments (\(ConfigReader.list(names))), found \(setting.value.kindDescription)")
            return [environment]
        }
        var result: [APNsEnvironment] = []
        for item in items {
            guard let text = item.stringValue, let value = APNsEnvironment(rawValue: text) else {
                reader.report(.invalidValue, at: setting.location, "expected \(ConfigReader.list(names)) in the list, not \(item.stringValue.map { TextSafety.quoted($0) } ?? item.kindDescription)")
                return [environment]
            }
            if result.contains(value) {
                reader.report(.invalidValue, at: setting.location, "\(TextSafety.quoted(text)) is listed twice")
                return [environment]
            }
            result.append(value)
        }
        guard result.contains(environment) else {
            reader.report(.invalidValue, at: setting.location, "the list must include the default environment \(TextSafety.quoted(environment.rawValue))")
            return [environment]
        }
        reader.record(path.appending("environments"), .array(result.map { .string($0.rawValue) }), origin: setting.origin)
        return result
    }

    /// A real send needs all three credentials: each one missing is its own diagnostic,
    /// naming the setting and its variable.
    public static func requireCredentials(_ config: APNsConfiguration, reader: inout ConfigReader,
                                          at path: JSONPath = JSONPath.root.appending("apns")) {
        guard !config.dryRun else { return }
        for (name, value) in [("teamId", config.teamId), ("keyId", config.keyId), ("keyFile", config.keyFile)]
        where value == nil && !reader.hasProblem(at: path.appending(name)) {
            reader.report(.missing, at: path.appending(name),
                          "\(name) is required unless dryRun is true (or set \(ConfigReader.variableName(for: path.appending(name))))")
        }
    }

    private static func readRetry(_ json: JSON?, reader: inout ConfigReader, at path: JSONPath) -> RetryPolicy {
        let object = reader.section(json, at: path, keys: ["maxAttempts", "baseBackoffMilliseconds", "maxBackoffMilliseconds"])
        var policy = RetryPolicy()
        policy.maxAttempts = reader.integer(object, "maxAttempts", at: path, in: 1...20, default: policy.maxAttempts) ?? policy.maxAttempts
        policy.baseBackoffMilliseconds = reader.integer(object, "baseBackoffMilliseconds", at: path, in: 1...600_000,
                                                        default: policy.baseBackoffMilliseconds) ?? policy.baseBackoffMilliseconds
        policy.maxBackoffMilliseconds = reader.integer(object, "maxBackoffMilliseconds", at: path, in: 1...3_600_000,
                                                       default: policy.maxBackoffMilliseconds) ?? policy.maxBackoffMilliseconds
        if policy.maxBackoffMilliseconds < policy.baseBackoffMilliseconds {
            reader.report(.invalidValue, at: path.appending("maxBackoffMilliseconds"),
                          "must be at least baseBackoffMilliseconds (\(policy.baseBackoffMilliseconds))")
        }
        return policy
    }

    static func urlProblem(_ text: String) -> String? {
        let url = text.trimmingTrailingSlashes
        let scheme: String
        if url.hasPrefix("https://") { scheme = "https://" } else if url.hasPrefix("http://") { scheme = "http://" } else {
            return "url must start with http:// or https://, not \(TextSafety.quoted(text))"
        }
        let authority = url.dropFirst(scheme.count)
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"), !authority.contains("?"), !authority.contains("#"),
              authority.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            return "url must be scheme://host[:port] with no path, not \(TextSafety.quoted(text))"
        }
        if scheme == "http://" {
            // Provider tokens must never cross a network in cleartext.
            let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst()) : String(authority.prefix { $0 != ":" })
            guard ["127.0.0.1", "localhost", "::1"].contains(host) else {
                return "http:// (cleartext) is only allowed to a loopback host (127.0.0.1, localhost, [::1]); use https://"
            }
        }
        return nil
    }

    /// Apple's team and key identifiers: the one rule the route table uses too.
    static func identifierProblem(_ text: String, name: String) -> String? {
        AppleIdentifier.problem(with: text, name: name)
    }

    /// `apns-topic`: the app's bundle id, optionally with a push type's suffix (`.voip`).
    static func topicProblem(_ text: String) -> String? {
        BundleID.problem(with: text)
    }
}

extension String {
    var trimmingTrailingSlashes: String {
        var text = self
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
