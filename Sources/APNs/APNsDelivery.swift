import StrictJSON
import Timing
import Crypto

/// A configuration's signing key and provider-token manager: what every sender of it
/// (`APNsFleet`, the one place senders are wired) and `pushgate jwt` sign with.
public enum APNsDelivery {
    /// Placeholder identifiers for a dry run with no credentials configured.
    public static let dryRunTeamId = "DRYRUNTEAM"
    public static let dryRunKeyId = "DRYRUNKEY0"

    /// The key (from `keyFile`, or ephemeral for a dry run without one) and its token
    /// manager, signed once so that a key that cannot sign fails at start-up.
    public static func providerTokens(for configuration: APNsConfiguration, clock: any TimeSource,
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
