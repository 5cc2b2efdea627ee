#if canImport(Glibc)
import Glibc
#endif
import Gateway
import OptionTable
import Outbox
import StrictJSON
import Storage
import Timing

/// `pushgate campaigns [--app NAME] [--config PATH] [--json] [--limit N]`: the campaigns in
/// the configured database (only one app's with `--app`), newest first, with their counts
/// by state.
/// `pushgate campaigns pause|resume|cancel ID [--config PATH] [--json]`: the lifecycle.
enum CampaignsCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["campaigns"], summary: "list the campaigns in the gateway's database; pause, resume or cancel one",
            forms: ["[--app NAME] [--json] [--limit N] [--config PATH]", "pause|resume|cancel ID [--json] [--config PATH]"],
            options: [ConfigOption.option,
                      .value("app", "NAME", "list only this app's campaigns (an app of the configuration)"),
                      .flag("json", "print the list as JSON (the shape of GET /v1/campaigns)"),
                      .value("limit", "N", "list at most N campaigns, newest first (1 to 10000, default 50)")]),
        subcommands: LifecycleAction.allCases.map(lifecycleCommand),
        run: run)

    /// `campaigns pause|resume|cancel ID`.
    static func lifecycleCommand(_ action: LifecycleAction) -> Command {
        Command(
            CommandDeclaration(
                path: ["campaigns", action.rawValue], summary: "\(action.rawValue) one campaign (works whether or not serve runs)",
                forms: ["ID [--json] [--config PATH]"],
                positionals: [Positional("ID", "the campaign's id")],
                options: [ConfigOption.option, .flag("json", "print the campaign as JSON (the shape of GET /v1/campaigns/{id})")],
                notes: ["Exit status: 0 done (or already so), 1 unknown or finished campaign, 2 usage, configuration or storage errors."]),
            run: { change(action, $0) })
    }

    static func run(_ args: Invocation) -> Int32 {
        var limit = 50
        if let text = args["limit"] {
            guard let n = Int(text), (1...10_000).contains(n) else {
                return args.usageError("--limit must be a whole number from 1 to 10000, got \(TextSafety.quoted(text))")
            }
            limit = n
        }
        let config: GatewayConfig
        switch GatewayConfig.load(path: configPath(args["config"])) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let value): config = value
        }
        let settings = config.durable
        // --app: only that app's campaigns. With one app configured every row is its own
        // (rows from before campaigns named their app included), so nothing is filtered.
        var app: String?
        if let name = args["app"] {
            switch config.app(named: name) {
            case .failure(let failure): return args.fail(failure)
            case .success(let found): app = config.apps.count == 1 ? nil : found.name
            }
        }
        var summaries: [CampaignSummary] = []
        // No database yet means no campaigns yet; do not create one just to list nothing.
        // Read-only: works next to a running server, and never migrates.
        if settings.storage.url != nil || access(settings.storage.path, F_OK) == 0 {
            let storage: any CampaignStorage
            switch DurableAssembly.openStorage(settings.storage, access: .readOnly) {
            case .failure(let failure): return args.fail(failure.message)
            case .success(let opened): storage = opened
            }
            do throws(StorageError) {
                summaries = try storage.campaigns(limit: limit, before: nil, owner: nil, app: app)
            } catch {
                return args.fail(DurableAssembly.storageFailure(error, settings.storage).message)
            }
        }
        let now = processClock.wallSeconds()
        if args.has("json") {
            Output.writeBytes(CampaignJSON.list(summaries, limit: limit, now: now))
        } else {
            Output.write(table(summaries, now: now))
        }
        return ExitStatus.ok
    }

    /// Pause, resume or cancel one campaign. Works whether or not `serve` runs: the change
    /// is one small write through SQLite's own lock (as `send` shares the provider token),
    /// and a running server's dispatcher sees it at its next claim. A cancel then ends the
    /// campaign's unsent devices here, in batches, so the answer counts them; devices in
    /// flight in a running server finish first. Exit 0 when done (or already so), 1 when
    /// the campaign is unknown or finished, 2 for usage, configuration or storage errors.
    static func change(_ action: LifecycleAction, _ args: Invocation) -> Int32 {
        guard args.positionals.count == 1, let id = args.positionals.first else {
            return args.usageError("expected one campaign ID")
        }
        let prefix = "pushgate campaigns \(action.rawValue)"
        let settings: DurableSettings
        switch GatewayConfig.load(path: configPath(args["config"])).map(\.durable) {
        case .failure(let failure):
            Output.error("\(prefix): \(failure.message)")
            return failure.status
        case .success(let value): settings = value
        }
        guard settings.storage.url != nil || access(settings.storage.path, F_OK) == 0 else {
            Output.error("\(prefix): no campaign \(TextSafety.quoted(id)) (no database at \(TextSafety.quoted(settings.storage.path)) yet)")
            return ExitStatus.findings
        }
        let storage: any CampaignStorage
        switch DurableAssembly.openStorage(settings.storage) {
        case .failure(let failure):
            Output.error("\(prefix): \(failure.message)")
            return failure.status
        case .success(let value): storage = value
        }
        let clock = processClock
        let outcome: LifecycleOutcome
        var summary: CampaignSummary
        do throws(StorageError) {
            outcome = try storage.changeLifecycle(id: id, action, now: clock.wallSeconds())
            switch outcome {
            case .notFound:
                Output.error("\(prefix): no campaign \(TextSafety.quoted(id))")
                return ExitStatus.findings
            case .refused(let found):
                Output.error("\(prefix): campaign \(found.id) is \(found.status(at: clock.wallSeconds()).rawValue); it cannot be \(pastTense(action))")
                return ExitStatus.findings
            case .changed(let found), .unchanged(let found):
                summary = found
            }
            if action == .cancel {
                // Batches, so a running server's dispatcher and intake wait at most one of them.
                while try storage.closeStopped(now: clock.wallSeconds(), limit: 2000) == 2000 {}
                summary = try storage.campaign(id: id) ?? summary
            }
        } catch {
            Output.error("\(prefix): \(DurableAssembly.storageFailure(error, settings.storage).message)")
            return ExitStatus.usage
        }
        let now = clock.wallSeconds()
        if args.has("json") {
            Output.writeBytes(CampaignJSON.summary(summary, now: now))
            return ExitStatus.ok
        }
        let already = if case .unchanged = outcome { " (it already was)" } else { "" }
        var line = "campaign \(summary.id) \(summary.status(at: now).rawValue)\(already)"
        if action == .cancel {
            line += ": \(summary.notSent(at: now)) of \(summary.devices) devices not sent"
            let inFlight = summary.counts[.inFlight] ?? 0
            if inFlight > 0 { line += "; \(inFlight) in flight finish first" }
        }
        Output.line(line)
        return ExitStatus.ok
    }

    static func pastTense(_ action: LifecycleAction) -> String {
        switch action {
        case .pause: "paused"
        case .resume: "resumed"
        case .cancel: "cancelled"
        }
    }

    static func table(_ summaries: [CampaignSummary], now: Double) -> String {
        guard !summaries.isEmpty else { return "no campaigns\n" }
        let header = ["ID", "APP", "STATUS", "CREATED", "DEVICES", "QUEUED", "DELIVERED", "FAILED", "UNREG", "SKIPPED", "DRY-RUN", "NOT-SENT"]
        var rows = [header]
        for s in summaries {
            let counts = s.counts
            let queued = (counts[.pending] ?? 0) + (counts[.inFlight] ?? 0) + (counts[.retrying] ?? 0)
            let status: String = s.status(at: now).rawValue
            let created: String = CampaignJSON.timestamp(s.createdAt)
            var row: [String] = [s.id, s.app.isEmpty ? "-" : s.app, status, created, String(s.devices), String(queued)]
            row += [DeliveryState.delivered, .failed, .unregistered, .skipped, .dryRun].map { String(counts[$0] ?? 0) }
            row.append(String(s.notSent(at: now)))
            rows.append(row)
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padding(to: widths[i] + 2) }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
