import APNs
import Gateway
import StrictJSON
#if canImport(Glibc)
import Glibc
#endif

/// The `apns` section of the gateway configuration, with `PUSHGATE_APNS_*` overrides,
/// turned into a ready sender. Any problem is a configuration error (exit 2).
enum APNsSetup {
    static func configuration(_ config: GatewayConfig, forceDryRun: Bool) -> Result<APNsConfiguration, CLIFailure> {
        do {
            let apns = try APNsConfiguration.parse(config.apns, environment: processEnvironment(),
                                                   baseDirectory: GatewayConfig.directory(of: config.source),
                                                   forceDryRun: forceDryRun)
            return .success(apns)
        } catch {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(config.source)): at \(error.description)"))
        }
    }

    /// Loads the key and builds the sender; notices (ephemeral key) go to stderr here.
    /// `tokenStore` shares the provider token with every process using the same storage.
    static func delivery(_ configuration: APNsConfiguration, source: String,
                         tokenStore: (any ProviderTokenStore)?) -> Result<APNsDelivery, CLIFailure> {
        do {
            let delivery = try APNsDelivery(configuration: configuration, tokenStore: tokenStore)
            for notice in delivery.notices { Output.error(notice) }
            return .success(delivery)
        } catch {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(source)): at \(error.description)"))
        }
    }

    /// Only the token manager (no transport), for `pushgate jwt`.
    static func tokens(_ configuration: APNsConfiguration, source: String,
                       tokenStore: (any ProviderTokenStore)?) -> Result<ProviderTokenManager, CLIFailure> {
        do {
            let (tokens, notices) = try APNsDelivery.providerTokens(for: configuration, tokenStore: tokenStore)
            for notice in notices { Output.error(notice) }
            return .success(tokens)
        } catch {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(source)): at \(error.description)"))
        }
    }
}

extension APNsSetup {
    /// The configured storage as the provider-token store, for commands that send or sign
    /// without running the outbox (`send`, `jwt`). None for an ephemeral dry-run key:
    /// its tokens are worthless and need no sharing, and no database is created for it.
    static func sharedTokens(_ config: GatewayConfig, _ configuration: APNsConfiguration) -> Result<(any ProviderTokenStore)?, CLIFailure> {
        guard configuration.keyFile != nil else { return .success(nil) }
        return DurableAssembly.settings(config, configPath: config.source)
            .flatMap { DurableAssembly.openStorage($0.storage) }
            .map { SharedProviderTokens(storage: $0) }
    }
}
