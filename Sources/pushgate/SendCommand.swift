#if canImport(Glibc)
import Glibc
#endif
import APNs
import DeepLinks
import Gateway
import Payloads
import StrictJSON

/// `pushgate send --campaign FILE [--devices FILE] [--config PATH] [--confirm-devices N] [--dry-run] [--json]`:
/// plans the campaign, then sends to the campaign's devices and every token in
/// `--devices` (streamed), with bounded concurrency. More devices than
/// `guard.confirmAbove` need `--confirm-devices N` (or `confirm_devices`) equal to the count. Exit 0 when every device got its
/// notification (or, in a dry run, its signed request), 1 when any did not, 2 for usage or
/// configuration errors.
enum SendCommand {
    static let usage = "usage: pushgate send --campaign FILE [--devices FILE] [--config PATH] [--app NAME] [--confirm-devices N] [--dry-run] [--json]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "send", arguments, usage: usage, valued: ["campaign", "devices", "config", "app", "confirm-devices"], flags: ["dry-run", "json"])
        } catch {
            return error.status
        }
        guard let campaignPath = args[option: "campaign"] else {
            Output.error("pushgate send: --campaign FILE is required\n\(usage)")
            return ExitStatus.usage
        }
        let configPath = configPath(args[option: "config"])
        let devicesPath = args[option: "devices"]
        var confirmed: Int?
        if let text = args[option: "confirm-devices"] {
            guard let n = Int(text), n >= 1 else {
                Output.error("pushgate send: --confirm-devices must be the number of devices (a whole number ≥ 1), got \(TextSafety.quoted(text))")
                return ExitStatus.usage
            }
            confirmed = n
        }

        let prepared: (CampaignPlan, APNsDelivery, DeviceLineReader?, SendGuard)
        switch prepare(campaignPath: campaignPath, configPath: configPath, app: args[option: "app"], devicesPath: devicesPath, forceDryRun: args.has("dry-run")) {
        case .failure(let failure):
            Output.error("pushgate send: \(failure.message)")
            return failure.status
        case .success(let value):
            prepared = value
        }
        let (plan, delivery, reader, sendGuard) = prepared
        let limit: Int?
        switch confirm(plan, devicesPath: devicesPath, reader: reader, confirmed: confirmed, sendGuard: sendGuard) {
        case .failure(let failure):
            delivery.transport?.shutdown()
            Output.error("pushgate send: \(failure.message)")
            return failure.status
        case .success(let value): limit = value
        }
        let job = SendJob(plan: plan, delivery: delivery, reader: reader, devicesPath: devicesPath ?? "",
                          report: SendReport(json: args.has("json"), dryRun: delivery.transport == nil), deviceLimit: limit)
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
    static func prepare(campaignPath: String, configPath: String, app name: String?, devicesPath: String?,
                        forceDryRun: Bool) -> Result<(CampaignPlan, APNsDelivery, DeviceLineReader?, SendGuard), CLIFailure> {
        let gateway: GatewayConfig
        let app: AppConfig
        let bytes: [UInt8]
        switch GatewayConfig.load(path: configPath)
            .flatMap({ c in readSmallFile(path: campaignPath, limit: 256 << 20).map { (c, $0) } })
            .flatMap({ c, b in c.app(forCampaign: b, at: campaignPath, option: name).map { (c, $0, b) } }) {
        case .failure(let failure): return .failure(failure)
        case .success(let value): (gateway, app, bytes) = value
        }
        let gatewayApp = app.gatewayApp
        let plan: CampaignPlan
        switch gatewayApp.plan(jsonBytes: bytes, requireDevices: devicesPath == nil) {
        case .failure(let rejection):
            let lines = rejection.problems.map { Diagnostic($0.diagnostic.code, at: .file(campaignPath, at: $0.path), $0.message).description }
            return .failure(CLIFailure(message: lines.joined(separator: "\n"), status: ExitStatus.findings))
        case .success(let p): plan = p
        }
        // Scheduling belongs to the outbox (serve): `send` sends now, so it refuses rather than ignores.
        let scheduled = [("send_at", plan.campaign.sendAt), ("expires_at", plan.campaign.expiresAt)].filter { $0.1 != nil }
        if !scheduled.isEmpty {
            let lines = scheduled.map {
                Diagnostic(.invalidValue, at: .file(campaignPath, at: JSONPath.root.appending($0.0)),
                           "pushgate send sends at once; schedule the campaign with POST /v1/campaigns on pushgate serve").description
            }
            return .failure(CLIFailure(message: lines.joined(separator: "\n"), status: ExitStatus.findings))
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
            }
            .map { (plan, $0, reader, gateway.sendGuard) }
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

/// One run of `send`: feeds devices to the sender with at most `concurrency` in flight and
/// reports each result as it arrives. Lives on one task, so its state needs no lock.
final class SendJob: @unchecked Sendable {
    private let plan: CampaignPlan
    private let sender: any NotificationSender
    private let reader: DeviceLineReader?
    private let devicesPath: String
    private let concurrency: Int
    private var report: SendReport
    /// Most devices to send (a `--devices` pipe that could not be counted ahead); nil: all.
    private let deviceLimit: Int?
    private var fed = 0

    init(plan: CampaignPlan, delivery: APNsDelivery, reader: DeviceLineReader?, devicesPath: String, report: SendReport,
         deviceLimit: Int? = nil) {
        self.deviceLimit = deviceLimit
        self.plan = plan
        sender = delivery.sender
        self.reader = reader
        self.devicesPath = devicesPath
        self.report = report
        // Enough to keep every stream of every connection busy, bounded for memory.
        let streams = delivery.transport.map { $0.settings.connections * $0.settings.maxConcurrentStreams } ?? 32
        concurrency = min(4096, max(1, streams * 2))
    }

    func run() async -> SendReport {
        var campaignDevices = plan.devices.makeIterator()
        let plan = self.plan
        let sender = self.sender
        await withTaskGroup(of: (Device, Result<DeliveryResult, PayloadError>).self) { group in
            var inFlight = 0
            func feed() {
                while inFlight < concurrency, let device = nextDevice(&campaignDevices) {
                    inFlight += 1
                    group.addTask {
                        // A device whose variables make the payload invalid is rejected, not sent.
                        do throws(PayloadError) {
                            let request = try plan.request(for: device)
                            return (device, .success(await sender.send(request)))
                        } catch {
                            return (device, .failure(error))
                        }
                    }
                }
            }
            feed()
            while let (device, result) = await group.next() {
                inFlight -= 1
                switch result {
                case .success(let delivery): report.record(device, delivery)
                case .failure(let error): report.recordRejected(device, error)
                }
                feed()
            }
        }
        return report
    }

    /// The campaign's own devices first, then the file's; invalid lines are reported here.
    private func nextDevice(_ campaignDevices: inout IndexingIterator<[Device]>) -> Device? {
        guard let device = nextListed(&campaignDevices) else { return nil }
        fed += 1
        if let deviceLimit, fed > deviceLimit {
            report.stop("more than \(deviceLimit) devices from \(TextSafety.quoted(devicesPath)), which could not be counted before sending "
                        + "(not a regular file): the rest is not sent; give a file, or --confirm-devices with the exact count [confirmationRequired]")
            return nil
        }
        return device
    }

    private func nextListed(_ campaignDevices: inout IndexingIterator<[Device]>) -> Device? {
        if let device = campaignDevices.next() { return device }
        guard let reader, report.readFailure == nil else { return nil }
        do throws(CLIFailure) {
            while let item = try reader.next() {
                switch item {
                case .device(let device, _):
                    if reader.totalBytes > 0 { report.showProgress(fraction: Double(reader.bytesRead) / Double(reader.totalBytes)) }
                    return device
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
