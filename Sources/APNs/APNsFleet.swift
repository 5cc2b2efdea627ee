import StrictJSON
import Timing
import CurlClient

/// The senders of several apps, sharing what Apple lets them share: one provider token
/// manager per signing key (team, key id, key file) and one HTTP/2 connection pool per
/// (APNs URL, team, key id): APNs ties a connection to the key of its first request and
/// answers a token of any other key on it 403 `UnrelatedKeyIdInToken`, even a key of the
/// same team. Each app gets one sender per environment it allows.
public final class APNsFleet: Sendable {
    /// One app's settings: its name and its `apns` configuration (environments included).
    public struct App: Sendable {
        public var name: String
        public var configuration: APNsConfiguration

        public init(name: String, configuration: APNsConfiguration) {
            self.name = name
            self.configuration = configuration
        }
    }

    /// A configuration problem of one app (its key cannot be loaded, its URL is refused).
    public struct Failure: Error, Sendable {
        public let app: String
        public let error: APNsConfigurationError
    }

    struct SenderKey: Hashable, Sendable {
        let app: String
        let environment: APNsEnvironment
    }

    private let live: [SenderKey: any NotificationSender]
    private let dryRun: [SenderKey: any NotificationSender]
    /// What each live sender depends on: its signing key and (unless a dry run) its pool.
    private let parts: [SenderKey: (tokens: ProviderTokenManager, transport: CurlHTTP2Transport?)]
    private let firstKey: SenderKey
    /// The first app's default-environment senders: for rows that name no configured app.
    private let fallback: (live: any NotificationSender, dryRun: any NotificationSender)
    /// Distinct token managers, in app order (one per signing key).
    public let tokens: [ProviderTokenManager]
    /// Distinct connection pools (none in a dry run).
    public let transports: [CurlHTTP2Transport]
    public let notices: [String]

    /// `apps` must not be empty. `tokenStore` shares each provider token with every process
    /// using the same storage.
    public init(apps: [App], clock: any TimeSource,
                tokenStore: (any ProviderTokenStore)? = nil) throws(Failure) {
        precondition(!apps.isEmpty, "a fleet has at least one app")
        var managers: [String: ProviderTokenManager] = [:]
        var tokenOrder: [ProviderTokenManager] = []
        var pools: [String: CurlHTTP2Transport] = [:]
        var poolOrder: [CurlHTTP2Transport] = []
        var notices: [String] = []
        var live: [SenderKey: any NotificationSender] = [:]
        var dryRun: [SenderKey: any NotificationSender] = [:]
        var parts: [SenderKey: (tokens: ProviderTokenManager, transport: CurlHTTP2Transport?)] = [:]
        for app in apps {
            let c = app.configuration
            // One manager per signing key; an ephemeral dry-run key is one for every app.
            let signingKey = "\(c.teamId ?? APNsDelivery.dryRunTeamId)|\(c.keyId ?? APNsDelivery.dryRunKeyId)|\(c.keyFile ?? "")"
            let tokens: ProviderTokenManager
            if let existing = managers[signingKey] { tokens = existing } else {
                do throws(APNsConfigurationError) {
                    let (made, said) = try APNsDelivery.providerTokens(for: c, clock: clock, tokenStore: tokenStore)
                    tokens = made
                    notices += said.filter { !notices.contains($0) }
                } catch {
                    throw Failure(app: app.name, error: error)
                }
                managers[signingKey] = tokens
                tokenOrder.append(tokens)
            }
            for environment in c.environments {
                var chosen = c
                chosen.environment = environment
                let key = SenderKey(app: app.name, environment: environment)
                dryRun[key] = DryRunSender(tokens: tokens, baseURL: chosen.baseURL, topicOverride: chosen.topic)
                if c.dryRun {
                    live[key] = dryRun[key]
                    parts[key] = (tokens, nil)
                    continue
                }
                let poolKey = "\(chosen.baseURL)|\(c.teamId ?? "")|\(c.keyId ?? "")"
                let transport: CurlHTTP2Transport
                if let existing = pools[poolKey] { transport = existing } else {
                    do throws(APNsConfigurationError) {
                        if let caFile = c.caFile { _ = try CAFile.check(caFile) }
                        do { transport = try CurlHTTP2Transport(settings: TransportSettings(chosen), clock: clock) } catch {
                            throw APNsConfigurationError(.invalidValue, at: JSONPath.root.appending("apns").appending("url"), error.message)
                        }
                    } catch {
                        throw Failure(app: app.name, error: error)
                    }
                    pools[poolKey] = transport
                    poolOrder.append(transport)
                }
                // The outbox owns retries: one request per attempt.
                live[key] = APNsClient(transport: transport, tokens: tokens, retry: .outboxAttempt, topicOverride: c.topic, clock: clock)
                parts[key] = (tokens, transport)
            }
        }
        let first = SenderKey(app: apps[0].name, environment: apps[0].configuration.environment)
        self.live = live
        self.dryRun = dryRun
        self.parts = parts
        firstKey = first
        fallback = (live[first]!, dryRun[first]!)
        tokens = tokenOrder
        transports = poolOrder
        self.notices = notices
    }

    /// The sender of an app's campaigns in an environment; the first app's for a name or
    /// environment not configured (rows written before apps were named).
    public func sender(app: String, environment: String, dryRun isDryRun: Bool) -> any NotificationSender {
        let key = APNsEnvironment(rawValue: environment).map { SenderKey(app: app, environment: $0) }
        if isDryRun { return key.flatMap { dryRun[$0] } ?? fallback.dryRun }
        return key.flatMap { live[$0] } ?? fallback.live
    }

    /// The sender of an app's default environment.
    public func sender(app: String, configuration: APNsConfiguration) -> any NotificationSender {
        sender(app: app, environment: configuration.environment.rawValue, dryRun: configuration.dryRun)
    }

    /// When the live sender of an app's campaigns in an environment may send again while it
    /// cannot: its signing key is held (until the pause ends or the next probe is due), or
    /// its connection pool cannot reach APNs (looked at again a second from `now`: the
    /// transport probes on its own). nil: it can send. Other apps' senders are unaffected,
    /// unless they share the key or the pool. A dry run is never held.
    public func heldUntil(app: String, environment: String, dryRun isDryRun: Bool, now: Double) -> Double? {
        guard !isDryRun else { return nil }
        let key = APNsEnvironment(rawValue: environment).map { SenderKey(app: app, environment: $0) }
        guard let (tokens, transport) = key.flatMap({ parts[$0] }) ?? parts[firstKey] else { return nil }
        let keyHold = tokens.hold().map { Double($0.until) }
        let unreachable: Double? = if let transport, transport.reachability != .reachable { now + 1 } else { nil }
        return [keyHold, unreachable].compactMap { $0 }.max()
    }

    /// The apps (and environments) whose sends cannot go now, each with why: for
    /// `/readyz` and the logs.
    public func heldApps() -> [(app: String, environment: APNsEnvironment, why: String)] {
        parts.sorted { ($0.key.app, $0.key.environment.rawValue) < ($1.key.app, $1.key.environment.rawValue) }.compactMap { key, part in
            if let hold = part.tokens.hold() { return (key.app, key.environment, hold.explanation) }
            if let transport = part.transport, case .unreachable(_, let lastError) = transport.reachability {
                return (key.app, key.environment, "APNs unreachable (last error \(lastError))")
            }
            return nil
        }
    }

    /// The token manager of an app's key in an environment (channel management signs with
    /// it too); nil for an app or environment not configured.
    public func tokenManager(app: String, environment: APNsEnvironment) -> ProviderTokenManager? {
        parts[SenderKey(app: app, environment: environment)]?.tokens
    }

    /// How many app and environment senders there are (a readiness check compares).
    public var senderCount: Int { parts.count }

    /// The earliest moment every key may send again, when any key is paused by APNs.
    public func pausedUntil() -> Int64? {
        tokens.compactMap { $0.pausedUntil() }.max()
    }

    /// The latest moment a held key may send again (its pause ends, or its next probe is
    /// due), when any key is held.
    public func heldUntil() -> Int64? {
        tokens.compactMap { $0.hold()?.until }.max()
    }

    /// The first step of a stop: no APNs request of any pool starts from now on (see
    /// `CurlHTTP2Transport.stopStartingRequests`).
    public func stopStartingRequests() {
        for transport in transports { transport.stopStartingRequests() }
    }

    public func shutdown() {
        for transport in transports { transport.shutdown() }
    }
}
