#if canImport(Glibc)
import Glibc
#endif
import APNs
import Synchronization
import DeepLinks
import Gateway
import OptionTable
import Outbox
import Payloads
import StrictJSON
import Timing
import CurlClient

/// `pushgate send --campaign FILE|- [--devices FILE|-] [--config PATH] [--dry-run] [--json]`
/// and the quick form `pushgate send --device TOKEN --alert TEXT [--deeplink URL]`: plans
/// the campaign, then sends to the campaign's devices and every token in `--devices`
/// (streamed), with bounded concurrency. More devices than `guard.confirmAbove` need
/// `--confirm-devices N` (or `confirm_devices`) equal to the count. Exit 0 when every
/// device got its notification (or, in a dry run, its signed request), 1 when any did not
/// or the campaign is refused, 2 for usage or configuration errors.
enum SendCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["send"], summary: "send a campaign to APNs (or dry-run it) and summarise the results",
            forms: ["--campaign FILE|- [--devices FILE|-] [--config PATH] [--confirm-devices N] [--store PATH] [--dry-run] [--json]",
                    "--device TOKEN --alert TEXT [--deeplink URL] [--config PATH] [--store PATH] [--dry-run] [--json]"],
            options: [
                .value("campaign", "FILE|-", "the campaign to send (JSON, docs/payloads.md); - reads it from standard input"),
                .value("devices", "FILE|-", "more device tokens, one per line (# comments), streamed; - reads standard input"),
                .value("device", "TOKEN", repeatable: true, "quick send: a device token to send --alert to"),
                .value("alert", "TEXT", "quick send: the alert's body (a campaign of this alert and the --device tokens)"),
                .value("deeplink", "URL", "quick send: the deep link, checked against the route table like a campaign's"),
                ConfigOption.option,
                .value("app", "NAME", "the configuration's app the campaign is for (else the campaign's \"app\", or the only one)"),
                .value("confirm-devices", "N", "the number of devices, required above guard.confirmAbove (wins over confirm_devices)"),
                .value("store", "PATH", "keep the send's outbox in this folder; the same command with it again finishes an interrupted send"),
                .flag("dry-run", "sign and build every request but send nothing (also apns.dryRun in the configuration)"),
                .flag("json", "print one JSON object per device, then the summary, instead of the text report"),
            ],
            notes: ["Exit status: 0 every device sent, 1 any device not sent or the campaign refused, 2 usage or configuration error "
                    + "(or the send stopped: APNs unreachable, the key stopped), 130 interrupted (SIGINT, SIGTERM): it says how to finish."]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        let source: CampaignSource
        switch CampaignSource.from(args) {
        case .failure(let problem): return args.usageError(problem.message)
        case .success(let s): source = s
        }
        let devicesPath = args["devices"]
        if devicesPath == "-", source.readsStandardInput {
            return args.usageError("--campaign - and --devices - cannot both read standard input")
        }
        var confirmed: Int?
        if let text = args["confirm-devices"] {
            guard let n = Int(text), n >= 1 else {
                return args.usageError("--confirm-devices must be the number of devices (a whole number ≥ 1), got \(TextSafety.quoted(text))")
            }
            confirmed = n
        }

        let prepared: PreparedSend
        switch prepare(source, configPath: configPath(args["config"]), app: args["app"], devicesPath: devicesPath, forceDryRun: args.has("dry-run")) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let value):
            prepared = value
        }
        let limit: Int?
        let fingerprint: String
        switch confirm(prepared.plan, devicesPath: devicesPath, reader: prepared.reader, confirmed: confirmed, sendGuard: prepared.sendGuard)
            .flatMap({ limit in
                SendStore.fingerprint(app: prepared.app.name, environment: prepared.apns.environment.rawValue, dryRun: prepared.isDryRun,
                                      campaign: prepared.campaignBytes, devicesPath: devicesPath).map { (limit, $0) }
            }) {
        case .failure(let failure):
            prepared.fleet.shutdown()
            return args.fail(failure)
        case .success(let value): (limit, fingerprint) = value
        }
        let send = OutboxSend(prepared: prepared, storeOption: args["store"], devicesPath: devicesPath, fingerprint: fingerprint,
                              deviceLimit: limit, json: args.has("json"), arguments: Array(CommandLine.arguments.dropFirst()))
        return send.run()
    }

    /// Plan, configuration, key, transport, devices file: everything that can fail before
    /// anything is sent. A campaign that does not plan is rejection (exit 1), the rest 2.
    static func prepare(_ source: CampaignSource, configPath: String, app name: String?, devicesPath: String?,
                        forceDryRun: Bool) -> Result<PreparedSend, CLIFailure> {
        let gateway: GatewayConfig
        let app: AppConfig
        let bytes: [UInt8]
        switch GatewayConfig.load(path: configPath)
            .flatMap({ c in source.bytes().map { (c, $0) } })
            .flatMap({ c, b in c.app(forCampaign: b, at: source.label, option: name).map { (c, $0, b) } }) {
        case .failure(let failure): return .failure(failure)
        case .success(let value): (gateway, app, bytes) = value
        }
        let gatewayApp = app.gatewayApp
        let plan: CampaignPlan
        switch gatewayApp.plan(jsonBytes: bytes, requireDevices: devicesPath == nil) {
        case .failure(let rejection):
            let lines = rejection.problems.map { Diagnostic($0.diagnostic.code, at: source.location(of: $0.path), $0.message).description }
            return .failure(CLIFailure(message: lines.joined(separator: "\n"), status: ExitStatus.findings))
        case .success(let p): plan = p
        }
        // `send` runs the outbox now, once: a schedule for later is serve's (it refuses
        // `send_at` rather than wait); `expires_at`, `lane` and `rate_per_second` it applies.
        let outboxOnly = [("send_at", plan.campaign.sendAt != nil,
                           "pushgate send sends at once; schedule the campaign with POST /v1/campaigns on pushgate serve")]
            .filter { $0.1 }
        if !outboxOnly.isEmpty {
            let lines = outboxOnly.map { Diagnostic(.invalidValue, at: source.location(of: JSONPath.root.appending($0.0)), $0.2).description }
            return .failure(CLIFailure(message: lines.joined(separator: "\n"), status: ExitStatus.findings))
        }
        if plan.channel != nil, devicesPath != nil {
            return .failure(CLIFailure(message: Diagnostic(PayloadErrorCode.conflictingFields.diagnosticCode, at: .option("--devices"),
                                                           "a channel campaign is one broadcast to the channel; it has no device list").description,
                                       status: ExitStatus.usage))
        }
        var reader: DeviceLineReader?
        if let devicesPath {
            do { reader = try DeviceLineReader(path: devicesPath) } catch { return .failure(error) }
        }
        return APNsSetup.configuration(gateway, app: app, forceDryRun: forceDryRun || plan.campaign.dryRun)
            .map { apns in
                // The campaign's own environment, when the app allows it (checked in planning).
                var chosen = apns
                chosen.environment = gatewayApp.environment(of: plan)
                return chosen
            }
            .flatMap { apns in
                // The same fleet `serve` builds, of this app in this environment only.
                var only = apns
                only.environments = [apns.environment]
                return APNsSetup.sharedTokens(gateway, apns)
                    .flatMap { APNsSetup.fleet(gateway, apps: [(app, only)], tokenStore: $0) }
                    .map { fleet in
                        for notice in fleet.notices { Output.error(notice) }
                        return PreparedSend(plan: plan, fleet: fleet, apns: only, reader: reader, sendGuard: gateway.sendGuard,
                                            gateway: gateway, app: app, campaignBytes: bytes)
                    }
                    .flatMap { prepared in checkChannel(prepared, source: source).map { prepared } }
            }
    }

    /// A channel campaign's channel, read at Apple with the delivery's provider token before
    /// anything is sent (as `POST /v1/campaigns` does): an unknown channel, or a non-zero
    /// expiration to one that stores no message, is a finding (exit 1). No answer: go on.
    static func checkChannel(_ prepared: PreparedSend, source: CampaignSource) -> Result<Void, CLIFailure> {
        let (plan, apns) = (prepared.plan, prepared.apns)
        guard let channel = plan.channel, !prepared.isDryRun,
              let tokens = prepared.fleet.tokenManager(app: prepared.app.name, environment: apns.environment) else { return .success(()) }
        let client = ChannelManagementClient(bundleId: prepared.app.bundleId, baseURL: apns.manageBaseURL, tokens: tokens,
                                             transport: CurlOneShot(caFile: apns.caFile, timeoutMilliseconds: Int(apns.requestTimeoutSeconds * 1000)),
                                             retry: apns.retry, clock: processClock)
        guard let finding = ChannelCheck.finding(plan, channel: channel, client: client) else { return .success(()) }
        prepared.fleet.shutdown()
        let location: DiagnosticLocation = if case .pointer(let path) = finding.location { source.location(of: path) } else { finding.location }
        return .failure(CLIFailure(message: Diagnostic(finding.code, at: location, finding.message).description, status: ExitStatus.findings))
    }

    /// The guard, before anything is sent: the campaign's devices plus the `--devices` file's
    /// (counted in a first pass when the file could be over the limit) against
    /// `guard.confirmAbove` and the confirmed count (`--confirm-devices`, else
    /// `confirm_devices`). A pipe cannot be counted ahead: the send then stops before the
    /// device past the limit (returned), so a mistake reaches at most that many.
    static func confirm(_ plan: CampaignPlan, devicesPath: String?, reader: DeviceLineReader?, confirmed option: Int?,
                        sendGuard: SendGuard) -> Result<Int?, CLIFailure> {
        let confirmed = option ?? plan.campaign.confirmDevices
        let location: DiagnosticLocation = option != nil ? .option("--confirm-devices") : .pointer(JSONPath.root.appending("confirm_devices"))
        var devices = plan.devices.count
        if let reader, let devicesPath {
            guard isRegularFile(devicesPath) else { return .success(confirmed ?? sendGuard.confirmAbove) }
            // Every token line is at least 64 bytes: a file too small to pass the limit is not read twice.
            if confirmed == nil && devices + reader.totalBytes / 64 <= sendGuard.confirmAbove { return .success(nil) }
            do {
                devices += try DeviceLineReader(path: devicesPath).countDevices()
            } catch {
                return .failure(error)
            }
        }
        if let refusal = sendGuard.problem(devices: devices, confirmed: confirmed, at: location) {
            return .failure(CLIFailure(message: refusal.description, status: ExitStatus.findings))
        }
        return .success(nil)
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}

/// Everything `send` checked before anything is stored or sent.
struct PreparedSend {
    let plan: CampaignPlan
    /// The app's senders, as `serve` has them: here one app in one environment.
    let fleet: APNsFleet
    /// The app's `apns` settings, in the campaign's environment.
    let apns: APNsConfiguration
    let reader: DeviceLineReader?
    let sendGuard: SendGuard
    let gateway: GatewayConfig
    let app: AppConfig
    /// The campaign document as read (the quick form's as built): part of the send's fingerprint.
    let campaignBytes: [UInt8]

    var isDryRun: Bool { apns.dryRun }
}

/// Where `send` gets its campaign: a file, standard input (`-`), or the quick form's
/// options, which become a campaign document planned exactly like a file's, so a quick
/// send is checked the same way (tokens, link, sizes) and gets the same errors, each
/// blamed on the option it came from.
enum CampaignSource {
    case file(String)
    case quick(alert: String, deeplink: String?, devices: [String])

    static func from(_ args: Invocation) -> Result<CampaignSource, UsageProblem> {
        let quickOptions = ["alert", "deeplink", "device"].filter { args.options.given($0) }
        if let path = args["campaign"] {
            if let first = quickOptions.first { return .failure(UsageProblem("--\(first) is for a quick send without --campaign; put it in the campaign instead")) }
            return .success(.file(path))
        }
        guard let alert = args["alert"] else {
            return .failure(UsageProblem(quickOptions.isEmpty ? "give --campaign FILE, or --device TOKEN --alert TEXT"
                                                              : "a quick send needs --alert TEXT"))
        }
        if args.all("device").isEmpty && args["devices"] == nil {
            return .failure(UsageProblem("a quick send needs --device TOKEN (or --devices FILE)"))
        }
        return .success(.quick(alert: alert, deeplink: args["deeplink"], devices: args.all("device")))
    }

    /// How messages name the campaign.
    var label: String {
        switch self {
        case .file(let path): return path == "-" ? standardInputName : path
        case .quick: return "the command line"
        }
    }

    var readsStandardInput: Bool {
        if case .file("-") = self { return true }
        return false
    }

    /// The campaign document.
    func bytes() -> Result<[UInt8], CLIFailure> {
        switch self {
        case .file(let path):
            return readInput(path: path, limit: 256 << 20)
        case .quick(let alert, let deeplink, let devices):
            var w = JSONWriter()
            w.object { w in
                w.member("alert", alert)
                if let deeplink { w.member("deeplink", deeplink) }
                if !devices.isEmpty {
                    w.key("devices")
                    w.array(devices) { w, token in w.string(token) }
                }
            }
            return .success(w.bytes)
        }
    }

    /// Where a problem at `path` in the document is, for the message: the file and pointer,
    /// or the option (`--device #2`) a quick send's value came from.
    func location(of path: JSONPath) -> DiagnosticLocation {
        switch self {
        case .file(let file):
            return .file(file == "-" ? standardInputName : file, at: path)
        case .quick:
            switch path.components.first {
            case .key("devices"):
                if path.components.count > 1, case .index(let i) = path.components[1] { return .option("--device #\(i + 1)") }
                return .option("--device")
            case .key("deeplink"): return .option("--deeplink")
            case .key("alert"): return .option("--alert")
            default: return .none
            }
        }
    }
}
