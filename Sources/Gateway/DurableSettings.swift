import StrictJSON

/// The `storage`, `dispatcher` and `webhook` sections of `config/gateway.json`.
/// Paths arrive already resolved against the configuration file's folder.
public struct DurableSettings: Sendable {
    public struct Storage: Sendable {
        public var path: String
        /// true: `PRAGMA synchronous=FULL` (a 202 survives power loss); false: NORMAL.
        public var synchronousFull = true
        public var busyTimeoutMilliseconds = 5000
        /// How long an `Idempotency-Key` keeps answering with its first campaign.
        public var idempotencyRetentionSeconds: Double = 24 * 3600
    }

    public struct Dispatcher: Sendable {
        /// Most deliveries claimed and not yet recorded: the resend window after a crash.
        /// nil: the APNs connections × streams.
        public var inFlight: Int?
        /// Most deliveries claimed in one transaction.
        public var claimBatch = 500
        /// Attempts (each one a full APNs client send with its own quick retries) before
        /// a transient failure becomes final.
        public var maxAttempts = 5
        public var retryBaseSeconds: Double = 2
        public var retryMaxSeconds: Double = 300
    }

    public struct Webhook: Sendable {
        public var url: String
        public var secret: String
        public var batchSize = 500
        public var timeoutSeconds = 10
        public var retryBaseSeconds: Double = 1
        public var retryMaxSeconds: Double = 300
    }

    public var storage: Storage
    public var dispatcher = Dispatcher()
    public var webhook: Webhook?

    public init(storagePath: String) {
        storage = Storage(path: storagePath)
    }

    /// Reads the three sections (any may be absent). `resolve` turns a configured path
    /// into one usable from the working directory; `environment` may supply the webhook
    /// secret as `PUSHGATE_WEBHOOK_SECRET`. Every problem is reported at once.
    public init(storage: JSON?, dispatcher: JSON?, webhook: JSON?, defaultPath: String,
                resolve: (String) -> String, environment: [String: String]) throws(SettingsErrors) {
        var errors: [SettingsError] = []
        self.init(storagePath: resolve(defaultPath))
        let root = JSONPath.root
        if let object = Self.section(storage, "storage", keys: ["path", "synchronous", "busyTimeoutMilliseconds", "idempotencyRetentionHours"], &errors) {
            let path = root.appending("storage")
            if let value = object["path"] {
                if let text = value.stringValue, !text.isEmpty { self.storage.path = resolve(text) } else {
                    errors.append(SettingsError(path: path.appending("path"), message: "expected a non-empty file path"))
                }
            }
            if let value = object["synchronous"] {
                switch value.stringValue {
                case "full": self.storage.synchronousFull = true
                case "normal": self.storage.synchronousFull = false
                default: errors.append(SettingsError(path: path.appending("synchronous"), message: "expected \"full\" or \"normal\""))
                }
            }
            Self.number(object, "busyTimeoutMilliseconds", 0...600_000, path, &errors) { self.storage.busyTimeoutMilliseconds = Int($0) }
            Self.number(object, "idempotencyRetentionHours", 0.001...(24 * 365), path, &errors) { self.storage.idempotencyRetentionSeconds = $0 * 3600 }
        }
        if let object = Self.section(dispatcher, "dispatcher", keys: ["inFlight", "claimBatch", "maxAttempts", "retryBaseSeconds", "retryMaxSeconds"], &errors) {
            let path = root.appending("dispatcher")
            Self.number(object, "inFlight", 1...100_000, path, &errors, integer: true) { self.dispatcher.inFlight = Int($0) }
            Self.number(object, "claimBatch", 1...100_000, path, &errors, integer: true) { self.dispatcher.claimBatch = Int($0) }
            Self.number(object, "maxAttempts", 1...100, path, &errors, integer: true) { self.dispatcher.maxAttempts = Int($0) }
            Self.number(object, "retryBaseSeconds", 0...3600, path, &errors) { self.dispatcher.retryBaseSeconds = $0 }
            Self.number(object, "retryMaxSeconds", 0...86_400, path, &errors) { self.dispatcher.retryMaxSeconds = $0 }
        }
        if let object = Self.section(webhook, "webhook", keys: ["url", "secret", "batchSize", "timeoutSeconds", "retryBaseSeconds", "retryMaxSeconds"], &errors) {
            let path = root.appending("webhook")
            let url = object["url"]?.stringValue ?? ""
            if !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
                errors.append(SettingsError(path: path.appending("url"), message: "expected an http:// or https:// URL"))
            }
            let secret = environment["PUSHGATE_WEBHOOK_SECRET"] ?? object["secret"]?.stringValue ?? ""
            if secret.utf8.count < 16 {
                errors.append(SettingsError(path: path.appending("secret"),
                                            message: "expected a secret of at least 16 bytes (or set PUSHGATE_WEBHOOK_SECRET)"))
            }
            var hook = Webhook(url: url, secret: secret)
            Self.number(object, "batchSize", 1...10_000, path, &errors, integer: true) { hook.batchSize = Int($0) }
            Self.number(object, "timeoutSeconds", 1...300, path, &errors, integer: true) { hook.timeoutSeconds = Int($0) }
            Self.number(object, "retryBaseSeconds", 0...3600, path, &errors) { hook.retryBaseSeconds = $0 }
            Self.number(object, "retryMaxSeconds", 0...86_400, path, &errors) { hook.retryMaxSeconds = $0 }
            self.webhook = hook
        }
        if !errors.isEmpty { throw SettingsErrors(errors) }
    }

    private static func section(_ json: JSON?, _ name: String, keys: Set<String>, _ errors: inout [SettingsError]) -> JSONObject? {
        guard let json else { return nil }
        let path = JSONPath.root.appending(name)
        guard let object = json.objectValue else {
            errors.append(SettingsError(path: path, message: "expected an object, got \(json.kindDescription)"))
            return nil
        }
        for key in object.keys where !keys.contains(key) {
            errors.append(SettingsError(path: path.appending(key), message: "unknown key; expected one of \(keys.sorted().joined(separator: ", "))"))
        }
        return object
    }

    private static func number(_ object: JSONObject, _ key: String, _ range: ClosedRange<Double>, _ path: JSONPath,
                               _ errors: inout [SettingsError], integer: Bool = false, apply: (Double) -> Void) {
        guard let value = object[key] else { return }
        if let n = value.doubleValue, range.contains(n), !integer || n == n.rounded() { apply(n) } else {
            let bounds = integer ? "\(Int(range.lowerBound)) to \(Int(range.upperBound))" : "\(range.lowerBound) to \(range.upperBound)"
            errors.append(SettingsError(path: path.appending(key), message: "expected \(integer ? "an integer" : "a number") from \(bounds)"))
        }
    }
}
