import APNs
import OptionTable

/// `pushgate jwt [--config PATH]`: prints the key's current provider token, for trying
/// APNs by hand with curl (`curl --http2 -H "authorization: bearer $(pushgate jwt)" …`).
/// It is the token shared through the configured storage (minted there if none is fresh),
/// so trying APNs by hand does not cost the gateway its 20-minute window.
enum JWTCommand {
    static let command = Command(
        CommandDeclaration(path: ["jwt"], summary: "print a fresh APNs provider token (for curl)",
                           options: [ConfigOption.option, ConfigOption.app]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        let result = GatewayConfig.load(path: configPath(args["config"]), app: args["app"])
            .flatMap { config, app in APNsSetup.configuration(config, app: app, forceDryRun: false).map { (config, app, $0) } }
            .flatMap { config, app, apns in
                APNsSetup.sharedTokens(config, apns).flatMap { APNsSetup.tokens(apns, config: config, app: app, tokenStore: $0) }
            }
        switch result {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let tokens):
            do {
                Output.line(try tokens.currentToken().compact)
                return ExitStatus.ok
            } catch {
                return args.fail(error.message)
            }
        }
    }
}
