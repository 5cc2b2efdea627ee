import APNs
import Outbox
import Gateway
import StrictJSON
#if canImport(Glibc)
import Glibc
#endif

/// The `apns` section of the gateway configuration, with `PUSHGATE_APNS_*` overrides,
/// turned into a ready sender. Any problem is a configuration error (exit 2), blamed on
/// the file or on the variable that gave the value.
enum APNsSetup {
    /// The section as read, with `--dry-run` applied; a real send needs its credentials.
    static func configuration(_ config: GatewayConfig, app: AppConfig, forceDryRun: Bool) -> Result<APNsConfiguration, CLIFailure> {
        var apns = app.apns
        if forceDryRun { apns.dryRun = true }
        var reader = config.reader
        APNsConfiguration.requireCredentials(apns, reader: &reader, at: app.path.appending("apns"))
        guard reader.isValid else { return .failure(.diagnostics(reader.diagnostics)) }
        return .success(apns)
    }

    /// A problem found while using a setting, at the file's pointer or the variable.
    static func failure(_ error: APNsConfigurationError, _ config: GatewayConfig, app: AppConfig) -> CLIFailure {
        .diagnostics([Diagnostic(error.diagnosticCode, at: config.reader.where(app.setting(error.setting, in: config.reader)), error.message)])
    }

    /// The senders of `serve` and `send`: one provider token per (team, key), kept in
    /// `tokenStore` for every process; one connection pool per (APNs URL, team, key); one
    /// sender per app and environment. Its notices (an ephemeral key) are the caller's to show.
    static func fleet(_ config: GatewayConfig, apps: [(AppConfig, APNsConfiguration)],
                      tokenStore: (any ProviderTokenStore)?) -> Result<APNsFleet, CLIFailure> {
        do throws(APNsFleet.Failure) {
            return .success(try APNsFleet(apps: apps.map { APNsFleet.App(name: $0.0.name, configuration: $0.1) }, clock: processClock,
                                          tokenStore: tokenStore))
        } catch {
            let app = apps.first { $0.0.name == error.app }?.0 ?? apps[0].0
            return .failure(failure(error.error, config, app: app))
        }
    }

    /// Only the token manager (no transport), for `pushgate jwt`.
    static func tokens(_ configuration: APNsConfiguration, config: GatewayConfig, app: AppConfig,
                       tokenStore: (any ProviderTokenStore)?) -> Result<ProviderTokenManager, CLIFailure> {
        do {
            let (tokens, notices) = try APNsDelivery.providerTokens(for: configuration, clock: processClock, tokenStore: tokenStore)
            for notice in notices { Output.error(notice) }
            return .success(tokens)
        } catch {
            return .failure(failure(error, config, app: app))
        }
    }
}

extension APNsSetup {
    /// The configured storage as the provider-token store, for commands that send or sign
    /// without running the outbox (`send`, `jwt`). None for an ephemeral dry-run key:
    /// its tokens are worthless and need no sharing, and no database is created for it.
    static func sharedTokens(_ config: GatewayConfig, _ configuration: APNsConfiguration) -> Result<(any ProviderTokenStore)?, CLIFailure> {
        guard configuration.keyFile != nil else { return .success(nil) }
        return DurableAssembly.openStorage(config.durable.storage).map { SharedProviderTokens(storage: $0) }
    }
}
