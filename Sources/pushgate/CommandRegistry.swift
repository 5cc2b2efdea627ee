import StrictJSON
/// A command of the `pushgate` executable.
struct CommandSpec: Sendable {
    let name: String
    let summary: String
    let run: @Sendable ([String]) -> Int32
}

enum CommandRegistry {
    /// Every command, in the order `pushgate help` lists them. Each lives in its own file.
    static let commands: [CommandSpec] = [
        CommandSpec(name: "help", summary: "show this list", run: { _ in printHelp(); return 0 }),
        CommandSpec(name: "check-link", summary: "check deep links against the route table", run: CheckLinkCommand.run),
        CommandSpec(name: "aasa", summary: "generate or validate apple-app-site-association", run: AASACommand.run),
        CommandSpec(name: "codegen", summary: "generate the app's Swift router, its conformance runner and test vectors", run: CodegenCommand.run),
        CommandSpec(name: "routes", summary: "print the route table's fingerprint", run: RoutesCommand.run),
        CommandSpec(name: "preview", summary: "show the exact APNs requests a campaign would send", run: PreviewCommand.run),
        CommandSpec(name: "send", summary: "send a campaign to APNs (or dry-run it) and summarise the results", run: SendCommand.run),
        CommandSpec(name: "jwt", summary: "print a fresh APNs provider token (for curl)", run: JWTCommand.run),
        CommandSpec(name: "serve", summary: "run the HTTP API (until SIGTERM or SIGINT)", run: ServeCommand.run),
        CommandSpec(name: "campaigns", summary: "list the campaigns in the gateway's database; pause, resume or cancel one", run: CampaignsCommand.run),
        CommandSpec(name: "apps", summary: "list the configured apps: bundle ids, hosts, teams, key ids", run: AppsCommand.run),
        CommandSpec(name: "config", summary: "check the configuration, or print it as it takes effect", run: ConfigCommand.run),
        CommandSpec(name: "hash-key", summary: "print the SHA-256 of an API key for the configuration", run: HashKeyCommand.run),
    ]

    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            printHelp(to: .stderr)
            return ExitStatus.usage
        }
        if name == "--help" || name == "-h" {
            printHelp()
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Output.error("pushgate: unknown command \(TextSafety.quoted(name)); run 'pushgate help'")
            return ExitStatus.usage
        }
        return command.run(Array(arguments.dropFirst()))
    }

    static func printHelp(to stream: Output.Stream = .stdout) {
        var text = "usage: pushgate <command> [options]\n\ncommands:\n"
        for command in commands {
            text += "  " + command.name.padding(to: 14) + command.summary + "\n"
        }
        Output.write(text, to: stream)
    }
}

enum ExitStatus {
    static let ok: Int32 = 0
    static let findings: Int32 = 1
    static let usage: Int32 = 2
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
