import APNsCore
import StrictJSON

/// Everything the delivery layer needs, from the `apns` object of `config/gateway.json`
/// with `PUSHGATE_APNS_*` environment variables taking precedence.
public struct APNsConfiguration: Sendable, Equatable {
    public var environment: APNsEnvironment
    /// The environments a campaign may choose (`"environment": "sandbox"` in the campaign);
    /// always includes `environment`, which campaigns that do not choose get.
    public var environments: [APNsEnvironment]
    /// Overrides the environment's host: `http://127.0.0.1:PORT` (HTTP/2 cleartext, prior
    /// knowledge; loopback only) or `https://…` (TLS, always verified).
    public var url: String?
    /// Overrides the channel management host (`api-manage-broadcast…`), as `url` does the
    /// push host.
    public var manageURL: String?
    /// CA bundle for verifying an `https` override (a local fake APNs with its own CA).
    public var caFile: String?
    public var teamId: String?
    public var keyId: String?
    /// Apple's `.p8` file (unencrypted PKCS#8 PEM, P-256).
    public var keyFile: String?
    /// `apns-topic` override for every request (normally the campaign's bundle id).
    public var topic: String?
    /// HTTP/2 connections. 2 by default, chosen from the `apns` benchmark (docs/apns.md).
    public var connections: Int
    /// Transport threads, each with its own libcurl multi handle and a share of the
    /// connections (at most one per connection).
    public var transportThreads: Int
    /// Per-connection stream cap on our side; the server's own limit still applies.
    public var maxConcurrentStreams: Int
    public var requestTimeoutSeconds: Double
    public var retry: RetryPolicy
    public var dryRun: Bool

    public init(environment: APNsEnvironment = .sandbox, url: String? = nil, caFile: String? = nil,
                teamId: String? = nil, keyId: String? = nil, keyFile: String? = nil, topic: String? = nil,
                connections: Int = 2, transportThreads: Int = 2, maxConcurrentStreams: Int = 100, requestTimeoutSeconds: Double = 10,
                retry: RetryPolicy = RetryPolicy(), dryRun: Bool = false) {
        self.environment = environment
        self.environments = [environment]
        self.url = url
        self.caFile = caFile
        self.teamId = teamId
        self.keyId = keyId
        self.keyFile = keyFile
        self.topic = topic
        self.connections = connections
        self.transportThreads = transportThreads
        self.maxConcurrentStreams = maxConcurrentStreams
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.retry = retry
        self.dryRun = dryRun
    }

    /// Where requests go: the override if set, else Apple's host for the environment.
    public var baseURL: String { url ?? environment.baseURL }

    /// Where channel management requests go: the override if set, else Apple's
    /// management host for the environment.
    public var manageBaseURL: String { manageURL ?? environment.manageBaseURL }
}
