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
            forms: ["--campaign FILE|- [--devices FILE|-] [--config PATH] [--confirm-devices N] [--dry-run] [--json]",
                    "--device TOKEN --alert TEXT [--deeplink URL] [--config PATH] [--dry-run] [--json]"],
            options: [
                .value("campaign", "FILE|-", "the campaign to send (JSON, docs/payloads.md); - reads it from standard input"),
                .value("devices", "FILE|-", "more device tokens, one per line (# comments), streamed; - reads standard input"),
                .value("device", "TOKEN", repeatable: true, "quick send: a device token to send --alert to"),
                .value("alert", "TEXT", "quick send: the alert's body (a campaign of this alert and the --device tokens)"),
                .value("deeplink", "URL", "quick send: the deep link, checked against the route table like a campaign's"),
                ConfigOption.option,
                .value("app", "NAME", "the configuration's app the campaign is for (else the campaign's \"app\", or the only one)"),
                .value("confirm-devices", "N", "the number of devices, required above guard.confirmAbove (wins over confirm_devices)"),
                .flag("dry-run", "sign and build every request but send nothing (also apns.dryRun in the configuration)"),
                .flag("json", "print one JSON object per device, then the summary, instead of the text report"),
            ],
            notes: ["Exit status: 0 every device sent, 1 any device not sent or the campaign refused, 2 usage or configuration error."]),
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

        let prepared: (CampaignPlan, APNsDelivery, DeviceLineReader?, SendGuard)
        switch prepare(source, configPath: configPath(args["config"]), app: args["app"], devicesPath: devicesPath, forceDryRun: args.has("dry-run")) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let value):
            prepared = value
        }
        let (plan, delivery, reader, sendGuard) = prepared
        let limit: Int?
        switch confirm(plan, devicesPath: devicesPath, reader: reader, confirmed: confirmed, sendGuard: sendGuard) {
        case .failure(let failure):
            delivery.transport?.shutdown()
            return args.fail(failure)
        case .success(let value): limit = value
        }
        let job = SendJob(plan: plan, delivery: delivery, reader: reader,
                          devicesPath: devicesPath == "-" ? standardInputName : devicesPath ?? "",
                          report: SendReport(json: args.has("json"), dryRun: delivery.transport == nil,
                                             environment: delivery.environment.rawValue), deviceLimit: limit)
        let report = runAndWait { await job.run() }
        delivery.transport?.shutdown()
        report.printSummary()
        if let failure = report.readFailure {
            Output.error("pushgate send: --devices \(failure)")
            return ExitStatus.usage
        }
        if var reason = report.stopReason {
            if let hold = delivery.tokens.hold(), hold.kind == .paused {
                reason += " (until \(CampaignJSON.timestamp(Double(hold.until)))); run again after that"
            }
            Output.error("pushgate send: \(reason) (\(report.notSent) devices not sent)")
            return ExitStatus.usage
        }
        return report.allDelivered ? ExitStatus.ok : ExitStatus.findings
    }

    /// Plan, configuration, key, transport, devices file: everything that can fail before
    /// anything is sent. A campaign that does not plan is rejection (exit 1), the rest 2.
    static func prepare(_ source: CampaignSource, configPath: String, app name: String?, devicesPath: String?,
                        forceDryRun: Bool) -> Result<(CampaignPlan, APNsDelivery, DeviceLineReader?, SendGuard), CLIFailure> {
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
        // Scheduling and lanes belong to the outbox (serve): `send` sends one campaign now, so
        // it refuses them rather than ignores them (`rate_per_second` it applies).
        let outboxOnly = [("send_at", plan.campaign.sendAt != nil,
                           "pushgate send sends at once; schedule the campaign with POST /v1/campaigns on pushgate serve"),
                          ("expires_at", plan.campaign.expiresAt != nil,
                           "pushgate send sends at once; schedule the campaign with POST /v1/campaigns on pushgate serve"),
                          ("lane", plan.campaign.lane != nil,
                           "pushgate send sends this one campaign alone, so there is no lane to wait in; lanes order the campaigns "
                           + "of pushgate serve's outbox (POST /v1/campaigns); leave lane out here")]
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
                APNsSetup.sharedTokens(gateway, apns).flatMap { APNsSetup.delivery(apns, config: gateway, app: app, tokenStore: $0) }
                    .flatMap { delivery in checkChannel(plan, apns: apns, app: app, delivery: delivery, source: source).map { delivery } }
            }
            .map { (plan, $0, reader, gateway.sendGuard) }
    }

    /// A channel campaign's channel, read at Apple with the delivery's provider token before
    /// anything is sent (as `POST /v1/campaigns` does): an unknown channel, or a non-zero
    /// expiration to one that stores no message, is a finding (exit 1). No answer: go on.
    static func checkChannel(_ plan: CampaignPlan, apns: APNsConfiguration, app: AppConfig, delivery: APNsDelivery,
                             source: CampaignSource) -> Result<Void, CLIFailure> {
        guard let channel = plan.channel, delivery.transport != nil else { return .success(()) }
        let client = ChannelManagementClient(bundleId: app.bundleId, baseURL: apns.manageBaseURL, tokens: delivery.tokens,
                                             transport: CurlOneShot(caFile: apns.caFile, timeoutMilliseconds: Int(apns.requestTimeoutSeconds * 1000)),
                                             retry: apns.retry)
        guard let finding = ChannelCheck.finding(plan, channel: channel, client: client) else { return .success(()) }
        delivery.transport?.shutdown()
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
                let counter = try DeviceLineReader(path: devicesPath)
                while let item = try counter.next() { if case .device = item { devices += 1 } }
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

/// One run of `send`: `concurrency` worker tasks, each taking the next device, sending
/// it and reporting its result, until no device is left. A worker lives for the whole
/// send (no task per device: creating, finishing and awaiting one cost more than the rest
/// of the Swift side of a request). The workers share the devices, the rate bucket and
/// the report under one lock, held only to take a device or record a result.
final class SendJob: @unchecked Sendable {
    private let plan: CampaignPlan
    private let sender: any NotificationSender
    private let reader: DeviceLineReader?
    private let devicesPath: String
    private let concurrency: Int
    /// The task threads the workers run on (`CurlHTTP2Transport.executors`), one beside
    /// each transport thread, so that libcurl's threads do libcurl's work alone; none (the
    /// shared pool) in a dry run, or when the devices come from a pipe, whose reads could
    /// block the thread every worker of it waits on.
    private let executors: [any TaskExecutor]
    /// What the workers share: the report, the devices not yet taken, the rate bucket.
    private let lock = Mutex(())
    private var report: SendReport
    /// Most devices to send (a `--devices` pipe that could not be counted ahead); nil: all.
    private let deviceLimit: Int?
    private var fed = 0
    private var campaignDevices: EnumeratedSequence<[Device]>.Iterator
    /// `rate_per_second`: the outbox's bucket rule, kept in this process (nothing else
    /// sends this campaign).
    private var bucket: RateBucket?
    private let clock = SystemClock()

    init(plan: CampaignPlan, delivery: APNsDelivery, reader: DeviceLineReader?, devicesPath: String, report: SendReport,
         deviceLimit: Int? = nil) {
        self.deviceLimit = deviceLimit
        self.plan = plan
        sender = delivery.sender
        self.reader = reader
        self.devicesPath = devicesPath
        self.report = report
        campaignDevices = plan.devices.enumerated().makeIterator()
        bucket = plan.campaign.ratePerSecond.map { RateBucket(ratePerSecond: $0) }
        // Enough to keep every stream of every connection busy, bounded for memory.
        let streams = delivery.transport.map { $0.settings.connections * $0.settings.maxConcurrentStreams } ?? 32
        concurrency = min(4096, max(1, streams * 2))
        executors = reader?.isRegularFile == false ? [] : delivery.transport?.executors ?? []
    }

    func run() async -> SendReport {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                if executors.isEmpty {
                    group.addTask { await self.work() }
                } else {
                    group.addTask(executorPreference: executors[worker % executors.count]) { await self.work() }
                }
            }
        }
        return lock.withLock { _ in report }
    }

    /// One worker: devices until none is left. With a rate cap, each device taken pays for
    /// the next free moment of the bucket (it may go into debt) and waits for it, so the
    /// workers' sends are spaced by `1 / ratePerSecond` without waking each other.
    private func work() async {
        let plan = self.plan
        let sender = self.sender
        while let (position, device, sendAt) = take() {
            if let sendAt {
                let wait = sendAt - clock.monotonicSeconds()
                if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            }
            // The campaign's own devices were rendered by the planner; the file's are
            // rendered here, once. A device whose variables make the payload invalid is
            // rejected, not sent.
            let result: Result<DeliveryResult, PayloadError>
            do throws(PayloadError) {
                let request = if let position { plan.plannedRequest(forDeviceAt: position, apnsID: APNsID.random()) }
                    else { try plan.request(for: device) }
                result = .success(await sender.send(request))
            } catch {
                result = .failure(error)
            }
            lock.withLock { _ in
                switch result {
                case .success(let delivery): report.record(device, delivery)
                case .failure(let error): report.recordRejected(device, error)
                }
            }
        }
    }

    /// The next device (with its position in the campaign's list, nil for the file's) and,
    /// under a rate cap, the moment it may go; nil when none is left.
    private func take() -> (Int?, Device, Double?)? {
        lock.withLock { _ -> (Int?, Device, Double?)? in
            guard let (position, device) = nextDevice() else { return nil }
            guard var capped = bucket else { return (position, device, nil) }
            let now = clock.monotonicSeconds()
            let at = capped.nextSendAt(now: now)
            capped.pay(1, now: now)
            bucket = capped
            return (position, device, at > now ? at : nil)
        }
    }

    /// The campaign's own devices first, then the file's; invalid lines are reported here.
    /// With its position in the campaign's list, nil for the file's devices.
    private func nextDevice() -> (Int?, Device)? {
        guard let next = nextListed() else { return nil }
        fed += 1
        if let deviceLimit, fed > deviceLimit {
            report.stop("more than \(deviceLimit) devices from \(TextSafety.quoted(devicesPath)), which could not be counted before sending "
                        + "(not a regular file): the rest is not sent; give a file, or --confirm-devices with the exact count [confirmationRequired]")
            return nil
        }
        return next
    }

    private func nextListed() -> (Int?, Device)? {
        if let (position, device) = campaignDevices.next() { return (position, device) }
        guard let reader, report.readFailure == nil else { return nil }
        do throws(CLIFailure) {
            while let item = try reader.next() {
                switch item {
                case .device(let device, _):
                    if reader.totalBytes > 0 { report.showProgress(fraction: Double(reader.bytesRead) / Double(reader.totalBytes)) }
                    return (nil, device)
                case .invalid(let line, let problem):
                    report.recordInvalid(line: line, problem: problem, source: devicesPath)
                }
            }
        } catch {
            report.recordReadFailure(error.message)
        }
        return nil
    }
}
