import Storage
import StrictJSON
import Timing

/// The `storage`, `dispatcher`, `lanes` and `webhook` sections of `config/gateway.json`.
/// Paths arrive already resolved against the configuration file's folder.
public struct DurableSettings: Sendable {
    public struct Storage: Sendable {
        public var path: String
        /// `postgresql://user@host:port/database`: a PostgreSQL database several instances
        /// share instead of the SQLite file at `path`. nil: SQLite.
        public var url: String?
        /// The database password (`storage.password`, usually `PUSHGATE_STORAGE_PASSWORD`),
        /// or the file holding it; either overrides a password in the URL. Never logged.
        public var password: String?
        public var passwordFile: String?
        /// Connections each instance keeps to PostgreSQL.
        public var poolSize = 4
        /// true: `PRAGMA synchronous=FULL` (a 202 survives power loss); false: NORMAL.
        public var synchronousFull = true
        public var busyTimeoutMilliseconds = 5000
        /// How long an `Idempotency-Key` keeps answering with its first campaign.
        public var idempotencyRetentionSeconds: Double = 24 * 3600
        /// Finished campaigns (their devices, keys and webhook events) are purged after this.
        public var retentionSeconds: Double = 30 * 86_400
        /// The Live Activity registry's bounds (`liveActivityTokensPerActivity`, `…PerApp`).
        public var liveActivityLimits = LiveActivityLimits()
        /// An update token not registered again for this long is removed (an activity
        /// lives at most 8 hours, and 4 more on the Lock Screen once ended).
        public var liveActivityTokenRetentionSeconds = Self.defaultLiveActivityTokenRetentionSeconds
        public static let defaultLiveActivityTokenRetentionSeconds: Double = 24 * 3600
        /// On a shared database, how long one instance holds a webhook batch it is sending
        /// (`webhook.leaseSeconds`): another instance sends that batch only once it expires.
        public var webhookLeaseSeconds: Double = 120
        /// `dispatcher.leaseSeconds`: PostgreSQL's session limits are sized from it.
        public var dispatcherLeaseSeconds: Double = 30

        /// Where the campaigns are, as shown in messages: the file, or the URL without its password.
        public var location: String { url.map(Self.redacted) ?? path }

        /// The URL with the password of its user part (`user:password@`) replaced by `(redacted)`.
        public static func redacted(_ url: String) -> String {
            guard let scheme = url.firstRange(of: "://") else { return url }
            let rest = url[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            guard let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return url }
            return String(url[..<rest.index(after: colon)]) + "(redacted)" + String(rest[at...])
        }
    }

    public struct Dispatcher: Sendable {
        /// Most deliveries claimed and not yet recorded: the resend window after a crash.
        /// nil: `defaultInFlight` of the APNs connections.
        public var inFlight: Int?
        /// Most deliveries claimed in one transaction.
        public var claimBatch = 500
        /// Attempts (each one a full APNs client send with its own quick retries) before
        /// a transient failure becomes final.
        public var maxAttempts = 5
        public var retryBaseSeconds: Double = 2
        public var retryMaxSeconds: Double = 300
        /// How long a claim is this process's: renewed while the send is in flight; once
        /// expired (the process died or hangs) another may take the delivery over.
        public var leaseSeconds: Double = 30

        /// The window when `inFlight` is not set: four times what the APNs connections
        /// carry at once, so sends go on while a turn's commit waits for its fsync (with
        /// one times, a 100,000-device campaign on SQLite ran at half the rate).
        public static func defaultInFlight(connections: Int, streamsPerConnection: Int) -> Int {
            max(1, 4 * connections * streamsPerConnection)
        }
    }

    public struct Lanes: Sendable {
        /// A campaign that does not name its `lane` is transactional up to this many
        /// devices, bulk above.
        public var transactionalMaxDevices = 100
    }

    public struct Webhook: Sendable {
        public var url: String
        public var secret: String
        public var batchSize = 500
        public var timeoutSeconds = 10
        public var retryBaseSeconds: Double = 1
        public var retryMaxSeconds: Double = 300
        /// See `Storage.webhookLeaseSeconds`; longer than `timeoutSeconds`, so two
        /// instances never post at once.
        public var leaseSeconds: Double = 120

        /// After a failed batch: doubling from `retryBaseSeconds`, at most `retryMaxSeconds`.
        public var retryBackoff: Backoff { Backoff(initial: .seconds(retryBaseSeconds), maximum: .seconds(retryMaxSeconds)) }
    }

    public var storage: Storage
    public var dispatcher = Dispatcher()
    public var lanes = Lanes()
    public var webhook: Webhook?

    public init(storagePath: String) {
        storage = Storage(path: storagePath)
    }

    public static let storageKeys = ["path", "url", "password", "passwordFile", "poolSize", "synchronous", "busyTimeoutMilliseconds",
                                     "idempotencyRetentionHours", "retentionDays",
                                     "liveActivityTokensPerActivity", "liveActivityTokensPerApp", "liveActivityTokenRetentionHours"]
    public static let dispatcherKeys = ["inFlight", "claimBatch", "maxAttempts", "retryBaseSeconds", "retryMaxSeconds", "leaseSeconds"]
    public static let lanesKeys = ["transactionalMaxDevices"]
    public static let webhookKeys = ["url", "secret", "batchSize", "timeoutSeconds", "retryBaseSeconds", "retryMaxSeconds", "leaseSeconds"]

    /// Reads the four sections (any may be absent) into `reader`. `defaultPath` is the
    /// database when `storage.path` is not set, relative to the configuration's folder.
    /// The webhook exists when its section does or `PUSHGATE_WEBHOOK_URL` is set.
    public init(storage: JSON?, dispatcher: JSON?, lanes: JSON? = nil, webhook: JSON?, defaultPath: String, reader: inout ConfigReader) {
        self.init(storagePath: defaultPath)
        let root = JSONPath.root
        var path = root.appending("storage")
        var object = reader.section(storage, at: path, keys: Self.storageKeys)
        self.storage.path = reader.path(object, "path", at: path, default: defaultPath)?.value ?? ConfigReader.resolve(defaultPath, in: reader.folder)
        // The URL may carry a password: shown redacted.
        self.storage.url = reader.string(object, "url", at: path, secret: true) { url in
            (url.hasPrefix("postgresql://") || url.hasPrefix("postgres://")) && !url.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F })
                ? nil : "expected a postgresql:// URL (postgresql://user@host:port/database)"
        }?.value
        // Its file is the setting storage.passwordFile (PUSHGATE_STORAGE_PASSWORD_FILE).
        self.storage.password = reader.string(object, "password", at: path, secret: true, secretFile: false)?.value
        self.storage.passwordFile = reader.path(object, "passwordFile", at: path)?.value
        if self.storage.password != nil && self.storage.passwordFile != nil {
            reader.report(.conflictingFields, at: path.appending("passwordFile"), "expected either storage.password or storage.passwordFile, not both")
        }
        self.storage.poolSize = reader.integer(object, "poolSize", at: path, in: 1...64, default: self.storage.poolSize) ?? self.storage.poolSize
        self.storage.synchronousFull = reader.choice(object, "synchronous", at: path, ["full", "normal"], default: "full") == "full"
        self.storage.busyTimeoutMilliseconds = reader.integer(object, "busyTimeoutMilliseconds", at: path, in: 0...600_000,
                                                              default: self.storage.busyTimeoutMilliseconds) ?? self.storage.busyTimeoutMilliseconds
        if let hours = reader.number(object, "idempotencyRetentionHours", at: path, in: 0.001...(24 * 365),
                                     default: self.storage.idempotencyRetentionSeconds / 3600) {
            self.storage.idempotencyRetentionSeconds = hours * 3600
        }
        if let days = reader.number(object, "retentionDays", at: path, in: 0.001...36_500, default: self.storage.retentionSeconds / 86_400) {
            self.storage.retentionSeconds = days * 86_400
        }
        var limits = self.storage.liveActivityLimits
        limits.perActivity = reader.integer(object, "liveActivityTokensPerActivity", at: path, in: 1...10_000_000,
                                            default: limits.perActivity) ?? limits.perActivity
        limits.perApp = reader.integer(object, "liveActivityTokensPerApp", at: path, in: 1...100_000_000,
                                       default: limits.perApp) ?? limits.perApp
        self.storage.liveActivityLimits = limits
        if let hours = reader.number(object, "liveActivityTokenRetentionHours", at: path, in: 0.001...(24 * 365),
                                     default: self.storage.liveActivityTokenRetentionSeconds / 3600) {
            self.storage.liveActivityTokenRetentionSeconds = hours * 3600
        }

        path = root.appending("dispatcher")
        object = reader.section(dispatcher, at: path, keys: Self.dispatcherKeys)
        var d = self.dispatcher
        d.inFlight = reader.integer(object, "inFlight", at: path, in: 1...100_000, default: nil)
        d.claimBatch = reader.integer(object, "claimBatch", at: path, in: 1...100_000, default: d.claimBatch) ?? d.claimBatch
        d.maxAttempts = reader.integer(object, "maxAttempts", at: path, in: 1...100, default: d.maxAttempts) ?? d.maxAttempts
        d.retryBaseSeconds = reader.number(object, "retryBaseSeconds", at: path, in: 0...3600, default: d.retryBaseSeconds) ?? d.retryBaseSeconds
        d.retryMaxSeconds = reader.number(object, "retryMaxSeconds", at: path, in: 0...86_400, default: d.retryMaxSeconds) ?? d.retryMaxSeconds
        d.leaseSeconds = reader.number(object, "leaseSeconds", at: path, in: 1...3600, default: d.leaseSeconds) ?? d.leaseSeconds
        self.dispatcher = d
        self.storage.dispatcherLeaseSeconds = d.leaseSeconds

        path = root.appending("lanes")
        object = reader.section(lanes, at: path, keys: Self.lanesKeys)
        self.lanes.transactionalMaxDevices = reader.integer(object, "transactionalMaxDevices", at: path, in: 0...1_000_000,
                                                            default: self.lanes.transactionalMaxDevices) ?? self.lanes.transactionalMaxDevices

        path = root.appending("webhook")
        let urlVariable = ConfigReader.variableName(for: path.appending("url"))
        guard webhook != nil || reader.environment[urlVariable] != nil else { return }
        object = reader.section(webhook, at: path, keys: Self.webhookKeys)
        let url = reader.string(object, "url", at: path) { url in
            (url.hasPrefix("http://") || url.hasPrefix("https://")) && !url.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F })
                ? nil : "expected an http:// or https:// URL"
        }
        if url == nil, object["url"] == nil { reader.report(.missing, at: path.appending("url"), "expected the receiver's http:// or https:// URL") }
        let secretVariable = ConfigReader.variableName(for: path.appending("secret"))
        let secret = reader.string(object, "secret", at: path, secret: true) { secret in
            secret.utf8.count < 16 ? "expected a secret of at least 16 bytes" : nil
        }
        if secret == nil, object["secret"] == nil, reader.environment[secretVariable] == nil, reader.environment[secretVariable + "_FILE"] == nil {
            reader.report(.missing, at: path.appending("secret"), "expected a secret of at least 16 bytes (or set \(secretVariable) or \(secretVariable)_FILE)")
        }
        var hook = Webhook(url: url?.value ?? "", secret: secret?.value ?? "")
        hook.batchSize = reader.integer(object, "batchSize", at: path, in: 1...10_000, default: hook.batchSize) ?? hook.batchSize
        hook.timeoutSeconds = reader.integer(object, "timeoutSeconds", at: path, in: 1...300, default: hook.timeoutSeconds) ?? hook.timeoutSeconds
        hook.retryBaseSeconds = reader.number(object, "retryBaseSeconds", at: path, in: 0...3600, default: hook.retryBaseSeconds) ?? hook.retryBaseSeconds
        hook.retryMaxSeconds = reader.number(object, "retryMaxSeconds", at: path, in: 0...86_400, default: hook.retryMaxSeconds) ?? hook.retryMaxSeconds
        hook.leaseSeconds = reader.number(object, "leaseSeconds", at: path, in: 1...86_400, default: hook.leaseSeconds) ?? hook.leaseSeconds
        if hook.leaseSeconds <= Double(hook.timeoutSeconds) {
            reader.report(.conflictingFields, at: path.appending("leaseSeconds"),
                          "expected webhook.leaseSeconds above webhook.timeoutSeconds (\(hook.timeoutSeconds)), so two instances never post one batch at once")
        }
        self.storage.webhookLeaseSeconds = hook.leaseSeconds
        self.webhook = hook
    }
}
