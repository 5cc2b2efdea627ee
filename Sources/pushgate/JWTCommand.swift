import APNs

/// `pushgate jwt [--config PATH]`: prints the key's current provider token, for trying
/// APNs by hand with curl (`curl --http2 -H "authorization: bearer $(pushgate jwt)" …`).
/// It is the token shared through the configured storage (minted there if none is fresh),
/// so trying APNs by hand does not cost the gateway its 20-minute window.
enum JWTCommand {
    static let usage = "usage: pushgate jwt [--config PATH] [--app NAME]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "jwt", arguments, usage: usage, valued: ["config", "app"])
        } catch {
            return error.status
        }
        let result = GatewayConfig.load(path: configPath(args[option: "config"]), app: args[option: "app"])
            .flatMap { config, app in APNsSetup.configuration(config, app: app, forceDryRun: false).map { (config, app, $0) } }
            .flatMap { config, app, apns in
                APNsSetup.sharedTokens(config, apns).flatMap { APNsSetup.tokens(apns, config: config, app: app, tokenStore: $0) }
            }
        switch result {
        case .failure(let failure):
            Output.error("pushgate jwt: \(failure.message)")
            return failure.status
        case .success(let tokens):
            do {
                Output.line(try tokens.currentToken().compact)
                return ExitStatus.ok
            } catch {
                Output.error("pushgate jwt: \(error.message)")
                return ExitStatus.usage
            }
        }
    }
}
