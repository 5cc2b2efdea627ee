import APNs
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
    static func delivery(_ configuration: APNsConfiguration, source: String) -> Result<APNsDelivery, CLIFailure> {
        do {
            let delivery = try APNsDelivery(configuration: configuration)
            for notice in delivery.notices { Output.error(notice) }
            return .success(delivery)
        } catch {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(source)): at \(error.description)"))
        }
    }

    /// Only the token manager (no transport), for `pushgate jwt`.
    static func tokens(_ configuration: APNsConfiguration, source: String) -> Result<ProviderTokenManager, CLIFailure> {
        do {
            let (tokens, notices) = try APNsDelivery.providerTokens(for: configuration)
            for notice in notices { Output.error(notice) }
            return .success(tokens)
        } catch {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(source)): at \(error.description)"))
        }
    }
}
