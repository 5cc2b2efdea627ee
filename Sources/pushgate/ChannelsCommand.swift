import APNs
import Payloads
import Gateway
import OptionTable
import StrictJSON
import CurlClient

/// `pushgate channels create|list|show|delete`: an app's broadcast channels at Apple's
/// channel management API, signed with the app's provider token (the one its pushes use,
/// shared through the configured storage). Exit 0 done, 1 Apple refused or did not
/// answer, 2 usage or configuration errors.
enum ChannelsCommand {
    static let common: [Option] = [
        ConfigOption.option, ConfigOption.app,
        .value("environment", "ENV", "sandbox or production (default: the app's apns.environment; channels of the two are separate)"),
        .flag("json", "print the answer as JSON (the shape of /v1/channels)"),
    ]
    static let notes = ["Exit status: 0 done, 1 APNs refused the request or did not answer, 2 usage or configuration errors."]

    static let command = Command.group("channels", "manage an app's broadcast channels at APNs (Live Activity broadcasts)", [
        Command(CommandDeclaration(path: ["channels", "create"], summary: "create a channel; prints its id",
                                   forms: ["--storage-policy POLICY [--app NAME] [--environment ENV] [--json] [--config PATH]"],
                                   options: [.value("storage-policy", "POLICY", "Apple's message-storage-policy: 0 (no-message-stored) or 1 (most-recent-message-stored)")] + common,
                                   notes: notes),
                run: { run($0, operation: create) }),
        Command(CommandDeclaration(path: ["channels", "list"], summary: "list the app's channel ids",
                                   forms: ["[--app NAME] [--environment ENV] [--json] [--config PATH]"], options: common, notes: notes),
                run: { run($0, operation: { _ in .success(.list) }) }),
        Command(CommandDeclaration(path: ["channels", "show"], summary: "show one channel's message-storage-policy and push type",
                                   forms: ["ID [--app NAME] [--environment ENV] [--json] [--config PATH]"],
                                   positionals: [Positional("ID", "the channel id APNs gave at create")], options: common, notes: notes),
                run: { run($0, operation: { channel($0).map { .read(channelId: $0) } }) }),
        Command(CommandDeclaration(path: ["channels", "delete"], summary: "delete one channel",
                                   forms: ["ID [--app NAME] [--environment ENV] [--json] [--config PATH]"],
                                   positionals: [Positional("ID", "the channel id APNs gave at create")], options: common, notes: notes),
                run: { run($0, operation: { channel($0).map { .delete(channelId: $0) } }) }),
    ])

    static func create(_ args: Invocation) -> Result<ChannelOperation, CLIFailure> {
        guard let text = args["storage-policy"] else {
            return .failure(.diagnostics([Diagnostic(.missing, at: .option("--storage-policy"),
                "give Apple's message-storage-policy: 0 (no-message-stored) or 1 (most-recent-message-stored)")]))
        }
        guard let policy = ChannelStoragePolicy(text: text) else {
            return .failure(.diagnostics([Diagnostic(.invalidValue, at: .option("--storage-policy"),
                "expected 0 (no-message-stored) or 1 (most-recent-message-stored), not \(TextSafety.quoted(text))")]))
        }
        return .success(.create(policy))
    }

    static func channel(_ args: Invocation) -> Result<String, CLIFailure> {
        guard args.positionals.count == 1, let id = args.positionals.first else {
            return .failure(.diagnostics([Diagnostic(.missing, at: .option("ID"), "expected one channel ID")]))
        }
        if let problem = BroadcastChannelID.problem(with: id) {
            return .failure(.diagnostics([Diagnostic(.invalidChannelId, at: .option("ID"), problem)]))
        }
        return .success(id)
    }

    static func run(_ args: Invocation, operation make: (Invocation) -> Result<ChannelOperation, CLIFailure>) -> Int32 {
        let operation: ChannelOperation
        switch make(args) {
        case .failure(let failure): return args.fail(failure)
        case .success(let value): operation = value
        }
        let setup = GatewayConfig.load(path: configPath(args["config"]), app: args["app"])
            .flatMap { config, app in managementClient(config, app, environment: args["environment"]).map { (app, $0, $1) } }
        let (app, client, environment): (AppConfig, ChannelManagementClient, APNsEnvironment)
        switch setup {
        case .failure(let failure): return args.fail(failure)
        case .success(let value): (app, client, environment) = value
        }
        let result = runAndWait { await client.perform(operation) }
        switch result.outcome {
        case .success(let answer):
            if args.has("json") {
                Output.writeBytes(ChannelJSON.render(answer, app: app.name, environment: environment, requestId: result.requestId))
            } else {
                Output.write(ChannelJSON.text(answer, app: app.name, environment: environment))
            }
            return ExitStatus.ok
        case .failure(let failure):
            let request = result.requestId.map { " (apns-request-id \($0))" } ?? ""
            return args.fail(CLIFailure(message: "\(failure.message)\(request) [\(failure.code)]", status: ExitStatus.findings))
        }
    }

    /// For `serve`: each app's management client in each of its environments, signed by
    /// the fleet's token manager of its key (the one its pushes use). Nil for a dry run.
    static func lookup(_ apps: [AppConfig], fleet: APNsFleet) -> ChannelClientLookup? {
        let byName = Dictionary(apps.map { ($0.name, (bundleId: $0.bundleId, apns: $0.apns)) }, uniquingKeysWith: { first, _ in first })
        guard byName.values.contains(where: { !$0.apns.dryRun }) else { return nil }
        return { name, environment in
            guard let (bundleId, apns) = byName[name], !apns.dryRun, apns.environments.contains(environment),
                  let tokens = fleet.tokenManager(app: name, environment: environment) else { return nil }
            var chosen = apns
            chosen.environment = environment
            return ChannelManagementClient(bundleId: bundleId, baseURL: chosen.manageBaseURL, tokens: tokens,
                                           transport: CurlOneShot(caFile: apns.caFile, timeoutMilliseconds: Int(apns.requestTimeoutSeconds * 1000)),
                                           retry: apns.retry, clock: processClock)
        }
    }

    /// The app's management client in the chosen environment: its key and provider token
    /// (shared through storage), `apns.manageURL` or Apple's management host.
    static func managementClient(_ config: GatewayConfig, _ app: AppConfig, environment name: String?)
        -> Result<(ChannelManagementClient, APNsEnvironment), CLIFailure> {
        var apns = app.apns
        if let name {
            guard let chosen = APNsEnvironment(rawValue: name), apns.environments.contains(chosen) else {
                return .failure(.diagnostics([Diagnostic(.invalidValue, at: .option("--environment"),
                    "app \(TextSafety.quoted(app.name)) sends in \(ConfigReader.list(apns.environments.map(\.rawValue))) (apns.environments), not \(TextSafety.quoted(name))")]))
            }
            apns.environment = chosen
        }
        if apns.dryRun {
            return .failure(.diagnostics([Diagnostic(.invalidValue, at: config.reader.where(app.setting(JSONPath.root.appending("apns").appending("dryRun"), in: config.reader)),
                "channels live at Apple: managing them needs real credentials, and apns.dryRun is true")]))
        }
        return APNsSetup.configuration(config, app: app, forceDryRun: false)
            .flatMap { checked in APNsSetup.sharedTokens(config, checked).flatMap { APNsSetup.tokens(checked, config: config, app: app, tokenStore: $0) } }
            .map { tokens in
                (ChannelManagementClient(bundleId: app.bundleId, baseURL: apns.manageBaseURL, tokens: tokens,
                                         transport: CurlOneShot(caFile: apns.caFile, timeoutMilliseconds: Int(apns.requestTimeoutSeconds * 1000)),
                                         retry: apns.retry, clock: processClock), apns.environment)
            }
    }
}
