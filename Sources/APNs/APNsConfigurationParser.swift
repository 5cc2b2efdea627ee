import StrictJSON

extension APNsConfiguration {
    /// Parses the `apns` object. Unknown keys are errors (a typo must not silently fall back
    /// to a default). Relative file paths are resolved against `baseDirectory` (the config
    /// file's folder). `environment` is the process environment, injected for tests.
    /// `forceDryRun` is the command line's `--dry-run`: it wins over file and environment.
    public static func parse(_ object: JSONObject?, at path: JSONPath = JSONPath().appending("apns"),
                             environment env: [String: String] = [:], baseDirectory: String = ".",
                             forceDryRun: Bool = false) throws(APNsConfigurationError) -> APNsConfiguration {
        let reader = SettingsReader(object: object ?? JSONObject(), path: path, environment: env)
        try reader.rejectUnknownKeys(["environment", "url", "caFile", "teamId", "keyId", "keyFile", "topic",
                                      "connections", "maxConcurrentStreams", "requestTimeoutSeconds", "retry", "dryRun"])
        var config = APNsConfiguration()
        if let (text, location) = try reader.string("environment", env: "PUSHGATE_APNS_ENVIRONMENT") {
            guard let value = APNsEnvironment(rawValue: text) else {
                throw APNsConfigurationError(.invalidValue, at: location, "environment must be \"production\" or \"sandbox\", not \(DisplayQuote.quoted(text))")
            }
            config.environment = value
        }
        config.dryRun = try reader.bool("dryRun", env: "PUSHGATE_APNS_DRY_RUN") ?? false
        if forceDryRun { config.dryRun = true }
        if let (text, location) = try reader.string("url", env: "PUSHGATE_APNS_URL") {
            config.url = try validatedURL(text, at: location)
        }
        if let (text, location) = try reader.string("caFile", env: "PUSHGATE_APNS_CA_FILE") {
            guard config.url?.hasPrefix("https://") == true else {
                throw APNsConfigurationError(.invalidValue, at: location, "caFile only applies to an https:// url override")
            }
            config.caFile = resolve(text, against: baseDirectory, location: location)
        }
        if let (text, location) = try reader.string("teamId", env: "PUSHGATE_APNS_TEAM_ID") {
            config.teamId = try validatedIdentifier(text, name: "teamId", at: location)
        }
        if let (text, location) = try reader.string("keyId", env: "PUSHGATE_APNS_KEY_ID") {
            config.keyId = try validatedIdentifier(text, name: "keyId", at: location)
        }
        if let (text, location) = try reader.string("keyFile", env: "PUSHGATE_APNS_KEY_FILE") {
            guard !text.isEmpty else { throw APNsConfigurationError(.invalidValue, at: location, "keyFile is empty") }
            config.keyFile = resolve(text, against: baseDirectory, location: location)
        }
        if let (text, location) = try reader.string("topic", env: "PUSHGATE_APNS_TOPIC") {
            guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
                throw APNsConfigurationError(.invalidValue, at: location, "topic must be a non-empty bundle identifier without spaces or control characters")
            }
            config.topic = text
        }
        config.connections = try reader.integer("connections", env: "PUSHGATE_APNS_CONNECTIONS", in: 1...64) ?? config.connections
        config.maxConcurrentStreams = try reader.integer("maxConcurrentStreams", env: nil, in: 1...1000) ?? config.maxConcurrentStreams
        config.requestTimeoutSeconds = try reader.number("requestTimeoutSeconds", env: "PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS",
                                                         in: 0.05...600) ?? config.requestTimeoutSeconds
        config.retry = try reader.retryPolicy("retry")
        if !config.dryRun {
            // A real send needs credentials; say which one is missing, all at start-up.
            for (name, value, variable) in [("teamId", config.teamId, "PUSHGATE_APNS_TEAM_ID"),
                                             ("keyId", config.keyId, "PUSHGATE_APNS_KEY_ID"),
                                             ("keyFile", config.keyFile, "PUSHGATE_APNS_KEY_FILE")] where value == nil {
                throw APNsConfigurationError(.missingSetting, at: path.appending(name).description,
                                             "\(name) is required unless dryRun is true (or set \(variable))")
            }
        }
        return config
    }

    private static func validatedURL(_ text: String, at location: String) throws(APNsConfigurationError) -> String {
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        let scheme: String
        if url.hasPrefix("https://") { scheme = "https://" } else if url.hasPrefix("http://") { scheme = "http://" } else {
            throw APNsConfigurationError(.invalidValue, at: location, "url must start with http:// or https://, not \(DisplayQuote.quoted(text))")
        }
        let authority = url.dropFirst(scheme.count)
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"), !authority.contains("?"), !authority.contains("#"),
              authority.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw APNsConfigurationError(.invalidValue, at: location, "url must be scheme://host[:port] with no path, not \(DisplayQuote.quoted(text))")
        }
        if scheme == "http://" {
            // Provider tokens must never cross a network in cleartext.
            let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst()) : String(authority.prefix { $0 != ":" })
            guard ["127.0.0.1", "localhost", "::1"].contains(host) else {
                throw APNsConfigurationError(.invalidValue, at: location, "http:// (cleartext) is only allowed to a loopback host (127.0.0.1, localhost, [::1]); use https://")
            }
        }
        return url
    }

    /// Apple's team and key identifiers are 10 upper-case letters or digits.
    private static func validatedIdentifier(_ text: String, name: String, at location: String) throws(APNsConfigurationError) -> String {
        guard text.utf8.count == 10, text.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }) else {
            throw APNsConfigurationError(.invalidValue, at: location, "\(name) must be 10 upper-case letters or digits, as Apple issues it; got \(DisplayQuote.quoted(text))")
        }
        return text
    }

    /// Paths in the file are relative to the file's folder; paths from the environment
    /// are relative to the working directory, as a shell user expects.
    private static func resolve(_ path: String, against base: String, location: String) -> String {
        if location.hasPrefix(SettingsReader.environmentPrefix) { return path }
        return path.hasPrefix("/") || base.isEmpty || base == "." ? path : base + (base.hasSuffix("/") ? "" : "/") + path
    }
}

/// Reads typed settings from a JSON object, letting an environment variable win.
private struct SettingsReader {
    let object: JSONObject
    let path: JSONPath
    let environment: [String: String]
    static let environmentPrefix = "environment variable "

    func rejectUnknownKeys(_ known: Set<String>) throws(APNsConfigurationError) {
        for key in object.keys where !known.contains(key) {
            throw APNsConfigurationError(.unknownSetting, at: path.appending(key).description,
                                         "unknown setting; expected one of \(known.sorted().joined(separator: ", "))")
        }
    }

    /// The value and where it came from, or nil when neither the file nor the environment sets it.
    func string(_ key: String, env: String) throws(APNsConfigurationError) -> (String, String)? {
        if let value = environment[env] { return (value, Self.environmentPrefix + env) }
        guard let json = object[key] else { return nil }
        guard case .string(let text) = json else {
            throw APNsConfigurationError(.wrongType, at: path.appending(key).description, "expected a string, found \(json.kindDescription)")
        }
        return (text, path.appending(key).description)
    }

    func bool(_ key: String, env: String) throws(APNsConfigurationError) -> Bool? {
        if let value = environment[env] {
            switch value {
            case "true", "1": return true
            case "false", "0": return false
            default: throw APNsConfigurationError(.invalidValue, at: Self.environmentPrefix + env, "expected true, false, 1 or 0, not \(DisplayQuote.quoted(value))")
            }
        }
        guard let json = object[key] else { return nil }
        guard case .bool(let b) = json else {
            throw APNsConfigurationError(.wrongType, at: path.appending(key).description, "expected true or false, found \(json.kindDescription)")
        }
        return b
    }

    func integer(_ key: String, env: String?, in range: ClosedRange<Int>) throws(APNsConfigurationError) -> Int? {
        if let env, let value = environment[env] {
            guard let n = Int(value), range.contains(n) else {
                throw APNsConfigurationError(.invalidValue, at: Self.environmentPrefix + env, "expected an integer in \(range.lowerBound)...\(range.upperBound), not \(DisplayQuote.quoted(value))")
            }
            return n
        }
        guard let json = object[key] else { return nil }
        let location = path.appending(key).description
        guard case .number = json else { throw APNsConfigurationError(.wrongType, at: location, "expected an integer, found \(json.kindDescription)") }
        guard let n = json.int64Value, n >= range.lowerBound, n <= range.upperBound else {
            throw APNsConfigurationError(.invalidValue, at: location, "expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return Int(n)
    }

    func number(_ key: String, env: String, in range: ClosedRange<Double>) throws(APNsConfigurationError) -> Double? {
        if let value = environment[env] {
            guard let n = Double(value), range.contains(n) else {
                throw APNsConfigurationError(.invalidValue, at: Self.environmentPrefix + env, "expected a number in \(range.lowerBound)...\(range.upperBound), not \(DisplayQuote.quoted(value))")
            }
            return n
        }
        guard let json = object[key] else { return nil }
        let location = path.appending(key).description
        guard let n = json.doubleValue else { throw APNsConfigurationError(.wrongType, at: location, "expected a number, found \(json.kindDescription)") }
        guard range.contains(n) else { throw APNsConfigurationError(.invalidValue, at: location, "expected a number in \(range.lowerBound)...\(range.upperBound)") }
        return n
    }

    func retryPolicy(_ key: String) throws(APNsConfigurationError) -> RetryPolicy {
        guard let json = object[key] else { return RetryPolicy() }
        let retryPath = path.appending(key)
        guard case .object(let retry) = json else {
            throw APNsConfigurationError(.wrongType, at: retryPath.description, "expected an object, found \(json.kindDescription)")
        }
        let reader = SettingsReader(object: retry, path: retryPath, environment: [:])
        try reader.rejectUnknownKeys(["maxAttempts", "baseBackoffMilliseconds", "maxBackoffMilliseconds"])
        var policy = RetryPolicy()
        policy.maxAttempts = try reader.integer("maxAttempts", env: nil, in: 1...20) ?? policy.maxAttempts
        policy.baseBackoffMilliseconds = try reader.integer("baseBackoffMilliseconds", env: nil, in: 1...600_000) ?? policy.baseBackoffMilliseconds
        policy.maxBackoffMilliseconds = try reader.integer("maxBackoffMilliseconds", env: nil, in: 1...3_600_000) ?? policy.maxBackoffMilliseconds
        guard policy.maxBackoffMilliseconds >= policy.baseBackoffMilliseconds else {
            throw APNsConfigurationError(.invalidValue, at: retryPath.appending("maxBackoffMilliseconds").description,
                                         "must be at least baseBackoffMilliseconds (\(policy.baseBackoffMilliseconds))")
        }
        return policy
    }
}
