import APNs

/// `pushgate jwt [--config PATH]`: prints a fresh provider token, for trying APNs by hand
/// with curl (`curl --http2 -H "authorization: bearer $(pushgate jwt)" …`).
enum JWTCommand {
    static let usage = "usage: pushgate jwt [--config PATH]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "jwt", arguments, usage: usage, valued: ["config"])
        } catch {
            return error.status
        }
        let path = args[option: "config"] ?? defaultConfigPath
        let result = GatewayConfig.load(path: path)
            .flatMap { APNsSetup.configuration($0, forceDryRun: false) }
            .flatMap { APNsSetup.tokens($0, source: path) }
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
