import StrictJSON
import Timing
import Crypto
import CurlClient

/// Wires a configuration into a ready sender: loads the key (failing at start-up with a
/// message naming the file), shares one token manager, and picks dry run or libcurl.
public struct APNsDelivery: Sendable {
    public let sender: any NotificationSender
    public let tokens: ProviderTokenManager
    /// Things the operator must know, for stderr (e.g. "signing with an ephemeral key").
    public let notices: [String]
    /// The libcurl transport, when not a dry run (for shutdown and statistics).
    public let transport: CurlHTTP2Transport?
    /// The APNs environment its answers come from.
    public let environment: APNsEnvironment

    /// Placeholder identifiers for a dry run with no credentials configured.
    public static let dryRunTeamId = "DRYRUNTEAM"
    public static let dryRunKeyId = "DRYRUNKEY0"

    /// `tokenStore` shares the provider token with every other process using the same
    /// storage (an ephemeral dry-run key is never shared: nothing it signs is valid).
    public init(configuration: APNsConfiguration, clock: any TimeSource = SystemClock(),
                tokenStore: (any ProviderTokenStore)? = nil) throws(APNsConfigurationError) {
        let (tokens, notices) = try Self.providerTokens(for: configuration, clock: clock, tokenStore: tokenStore)
        self.tokens = tokens
        environment = configuration.environment
        if configuration.dryRun {
            sender = DryRunSender(tokens: tokens, baseURL: configuration.baseURL, topicOverride: configuration.topic)
            transport = nil
        } else {
            if let caFile = configuration.caFile { try CAFile.check(caFile) }
            let curl: CurlHTTP2Transport
            do { curl = try CurlHTTP2Transport(settings: TransportSettings(configuration), clock: clock) } catch {
                throw APNsConfigurationError(.invalidValue, at: JSONPath.root.appending("apns").appending("url"), error.message)
            }
            transport = curl
            sender = APNsClient(transport: curl, tokens: tokens, retry: configuration.retry, topicOverride: configuration.topic, clock: clock)
        }
        self.notices = notices
    }

    /// The key (from `keyFile`, or ephemeral for a dry run without one) and its token
    /// manager, signed once so that a key that cannot sign fails at start-up.
    public static func providerTokens(for configuration: APNsConfiguration, clock: any TimeSource = SystemClock(),
                                      tokenStore: (any ProviderTokenStore)? = nil)
        throws(APNsConfigurationError) -> (ProviderTokenManager, notices: [String]) {
        var notices: [String] = []
        let key: SigningKey
        if let keyFile = configuration.keyFile {
            do { key = try SigningKey.load(file: keyFile) } catch { throw configurationError(error) }
        } else if configuration.dryRun {
            do { key = try SigningKey.ephemeral() } catch { throw configurationError(error) }
            notices.append("pushgate: dry run with no APNs key configured: signing with an ephemeral P-256 key (Apple would reject its tokens)")
        } else {
            throw APNsConfigurationError(.missingSetting, at: JSONPath.root.appending("apns").appending("keyFile"), "keyFile is required unless dryRun is true")
        }
        let tokens = ProviderTokenManager(key: key, teamId: configuration.teamId ?? dryRunTeamId,
                                          keyId: configuration.keyId ?? dryRunKeyId, clock: clock,
                                          store: key.isEphemeral ? nil : tokenStore)
        do { _ = try tokens.currentToken() } catch { throw configurationError(error) }
        return (tokens, notices)
    }

    private static func configurationError(_ error: SigningKeyError) -> APNsConfigurationError {
        let code: APNsConfigurationError.Code
        switch error.code {
        case .keyFileUnreadable: code = .keyFileUnreadable
        case .keyEncrypted: code = .keyEncrypted
        case .keyNotPKCS8: code = .keyNotPKCS8
        case .keyNotP256: code = .keyNotP256
        case .keyInvalid, .signingFailed: code = .keyInvalid
        case .tokenStoreFailed: return APNsConfigurationError(.tokenStoreFailed, at: JSONPath.root.appending("storage").appending("path"), error.message)
        }
        return APNsConfigurationError(code, at: JSONPath.root.appending("apns").appending("keyFile"), error.message)
    }
}
