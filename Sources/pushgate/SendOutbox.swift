#if canImport(Glibc)
import APNsCore
import Glibc
#endif
import APNs
import Crypto
import Outbox
import Payloads
import Storage
import StrictJSON
import Synchronization
import Timing

/// Where one `send` keeps its outbox: a folder holding an SQLite store (`outbox.sqlite`),
/// a temporary one removed when the send ends, or `--store PATH`, kept. A send that did
/// not end (Ctrl-C, SIGTERM, APNs unreachable, the key stopped) keeps even a temporary
/// folder, so that running the same command with `--store` on it finishes the send.
struct SendStore {
    let folder: String
    /// Made by this send, removed when it ends.
    let temporary: Bool
    var databasePath: String { folder + "/outbox.sqlite" }

    /// The idempotency key the send's campaign is stored under, with the send's fingerprint
    /// as its hash: the store says which send it holds, in the transaction that stored it.
    static let identityKey = "send"

    /// `--store PATH` (made if missing), else a new folder under `$TMPDIR` (or /tmp).
    static func open(_ option: String?) -> Result<SendStore, CLIFailure> {
        if let option {
            if mkdir(option, 0o700) != 0 && errno != EEXIST {
                return .failure(CLIFailure(message: "--store \(TextSafety.quoted(option)): cannot create the folder: \(String(cString: strerror(errno)))",
                                           status: ExitStatus.usage))
            }
            var info = stat()
            guard stat(option, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                return .failure(CLIFailure(message: "--store \(TextSafety.quoted(option)): not a folder (a send's store is a folder)",
                                           status: ExitStatus.usage))
            }
            return .success(SendStore(folder: option, temporary: false))
        }
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/pushgate-send.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            return .failure(CLIFailure(message: "cannot make a temporary folder for the send's store in \(TextSafety.quoted(base)): "
                                       + String(cString: strerror(errno)) + " (give one with --store PATH)", status: ExitStatus.usage))
        }
        return .success(SendStore(folder: String(cString: made), temporary: true))
    }

    /// Removes the folder and the files in it (the store, its WAL and lock files).
    func remove() {
        if let dir = opendir(folder) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(folder + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(folder)
    }

    /// What makes two runs the same send: the app, its environment, dry run or not, the
    /// campaign document and the devices file's content (hashed a megabyte at a time; a
    /// pipe cannot be read twice, so it is named, not hashed). Another fingerprint in a
    /// store is another send's, refused.
    static func fingerprint(app: String, environment: String, dryRun: Bool, campaign: [UInt8],
                            devicesPath: String?) -> Result<String, CLIFailure> {
        var parts: [UInt8] = Array("pushgate-send/1\0\(app)\0\(environment)\0\(dryRun)\0".utf8)
        parts += Array(SHA256.hex(campaign).utf8)
        guard let devicesPath else { return .success(SHA256.hex(parts)) }
        guard devicesPath != "-", SendCommand.isRegularFile(devicesPath) else {
            parts += Array("\0stdin".utf8)
            return .success(SHA256.hex(parts))
        }
        let fd = Glibc.open(devicesPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(CLIFailure(message: "--devices \(TextSafety.quoted(devicesPath)): cannot open: \(String(cString: strerror(errno)))",
                                       status: ExitStatus.usage))
        }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        parts += Array("\0file".utf8)
        while true {
            var filled = 0
            while filled < chunk.count {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 {
                    return .failure(CLIFailure(message: "--devices \(TextSafety.quoted(devicesPath)): cannot read: \(String(cString: strerror(errno))); nothing was sent",
                                               status: ExitStatus.usage))
                }
                if n == 0 { break }
                filled += n
            }
            if filled == 0 { break }
            parts += Array(SHA256.hex(Array(chunk[0..<filled])).utf8)
            if filled < chunk.count { break }
        }
        return .success(SHA256.hex(parts))
    }
}

/// The campaign's own devices' tokens, then the `--devices` file's, read as the store
/// takes them: invalid lines are reported as they are met, a read failure or the guard's
/// limit (a pipe that could not be counted ahead) ends the list.
final class SendDeviceTokens: Sequence, IteratorProtocol {
    private var planned: IndexingIterator<[Device]>
    private let reader: DeviceLineReader?
    private let limit: Int?
    private let devicesPath: String
    private(set) var report: SendReport
    private var given = 0
    /// The guard's limit was passed: the devices after it were not stored.
    private(set) var overLimit = false

    init(plan: CampaignPlan, reader: DeviceLineReader?, limit: Int?, devicesPath: String, report: SendReport) {
        planned = plan.devices.makeIterator()
        self.reader = reader
        self.limit = limit
        self.devicesPath = devicesPath
        self.report = report
    }

    func next() -> String? {
        guard let token = nextToken() else { return nil }
        given += 1
        if let limit, given > limit {
            overLimit = true
            return nil
        }
        return token
    }

    private func nextToken() -> String? {
        if let device = planned.next() { return device.token }
        guard let reader, report.readFailure == nil, !overLimit else { return nil }
        do throws(CLIFailure) {
            while let item = try reader.next() {
                switch item {
                case .device(let device, _):
                    if reader.totalBytes > 0 { report.showProgress(fraction: Double(reader.bytesRead) / Double(reader.totalBytes)) }
                    return device.token
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

/// Notices the first failure that is not the device's (APNs unreachable, the signing key
/// stopped): every other device would fail the same way, so the send stops there and
/// says why once; what is not sent stays in the store for a later run.
final class SendStopper: Sendable {
    private let first = Mutex<TransportFailure?>(nil)

    var failure: TransportFailure? { first.withLock { $0 } }

    /// `sender`, with its answers watched.
    @Sendable func watching(_ sender: any NotificationSender) -> any NotificationSender { Watched(inner: sender, stopper: self) }

    func note(_ result: DeliveryResult) {
        if case .transportFailed(let failure) = result, failure.stopsTheSend {
            first.withLock { if $0 == nil { $0 = failure } }
        }
    }

    private struct Watched: NotificationSender {
        let inner: any NotificationSender
        let stopper: SendStopper

        nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult {
            let result = await inner.send(request)
            stopper.note(result)
            return result
        }

        func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor,
                  then done: @escaping @Sendable (DeliveryResult) -> Void) {
            inner.send(request, awaitingOn: executor) { [stopper] result in
                stopper.note(result)
                done(result)
            }
        }
    }
}

extension TransportFailure {
    /// Failures that are not the device's: every other device would fail the same way, so
    /// `send` ends with one message and exit 2 instead of a failure per device.
    var stopsTheSend: Bool { code == .unreachable || code == .keyStopped }
}

/// `send` has no metrics endpoint: the outbox's metrics go nowhere.
struct NoOutboxMetrics: OutboxMetrics {
    func setQueueDepth(_ depth: Int) {}
    func recordAPNsLatencies(app: String, pushType: String, seconds: [Double]) {}
    func recordNotifications(app: String, pushType: String, result: String, reason: String, count: Int) {}
    func recordLateClaim(_ deliveries: Int) {}
}

/// One run of `send` through the outbox `serve` runs: the campaign is stored (or found in
/// `--store`), the dispatcher sends it with its retries, `rate_per_second`, lane and
/// `expires_at`, and the report is written from the recorded results, in device order.
struct OutboxSend {
    let prepared: PreparedSend
    let storeOption: String?
    let devicesPath: String?
    let fingerprint: String
    let deviceLimit: Int?
    let json: Bool
    /// The command line to run again to finish an interrupted send.
    let arguments: [String]

    /// The interrupted exit status (128 + SIGINT), for Ctrl-C and SIGTERM alike.
    static let interrupted: Int32 = 130

    func run() -> Int32 {
        let store: SendStore
        switch SendStore.open(storeOption) {
        case .failure(let failure): return finish(failure)
        case .success(let opened): store = opened
        }
        let signals = StopSignal()
        let me = InstanceID.current(now: processClock.wallSeconds())
        let storage: SQLiteCampaignStorage
        do throws(StorageError) {
            storage = try SQLiteCampaignStorage(path: store.databasePath, options: .init(synchronousFull: false, access: .owner(me)))
        } catch {
            if store.temporary { store.remove() }
            let shown = TextSafety.quoted(store.folder)
            return finish(.configuration(error.code == .inUse ? "--store \(shown): \(error.message)" : "--store \(shown): \(error.description)"))
        }
        let fleet = prepared.fleet
        let stopper = SendStopper()
        let transport = fleet.transports.first?.settings
        let dispatcher = DurableAssembly.dispatcher(
            prepared.gateway.durable.dispatcher, storage: storage, fleet: fleet, instance: me,
            defaultInFlight: DurableSettings.Dispatcher.defaultInFlight(connections: prepared.apns.connections,
                                                                        streamsPerConnection: prepared.apns.maxConcurrentStreams),
            metrics: NoOutboxMetrics(), log: { Output.error($0) }, onSettled: signals.nudge, through: stopper.watching)
        let campaigns = DurableCampaigns(storage: storage, dispatcher: dispatcher, idempotencyRetentionSeconds: .greatestFiniteMagnitude,
                                         transactionalMaxDevices: prepared.gateway.durable.lanes.transactionalMaxDevices,
                                         clock: processClock)
        var report = SendReport(json: json, dryRun: prepared.isDryRun, environment: prepared.apns.environment.rawValue)
        let summary: CampaignSummary
        switch campaign(in: storage, campaigns: campaigns, store: store, report: &report) {
        case .failure(let failure):
            if store.temporary { store.remove() }
            return finish(failure)
        case .success(let found): summary = found
        }
        if let failure = report.readFailure {
            // The list could not be read to its end: nothing of it is sent.
            _ = try? storage.changeLifecycle(id: summary.id, .cancel, now: processClock.wallSeconds())
            fleet.shutdown()
            if store.temporary { store.remove() }
            report.printSummary()
            Output.error("pushgate send: --devices \(failure)")
            return ExitStatus.usage
        }
        var interrupted = false
        if summary.finishedAt == nil {
            do throws(StorageError) { try dispatcher.start() } catch {
                return finish(.configuration("--store \(TextSafety.quoted(store.folder)): \(error.description)"))
            }
            // The dispatcher runs as a service, as under `serve`, and stops the same way.
            let group = ServiceGroup([dispatcher], clock: processClock, log: { Output.error($0) })
            group.start()
            // Looked at as soon as the dispatcher has recorded every answer it waited for (the
            // campaign may have finished), else often at first, then every 0.1 s.
            var interval = 0.002
            while true {
                if signals.received(within: interval) { interrupted = true; break }
                interval = min(0.1, interval * 2)
                if stopper.failure != nil { break }
                guard let now = try? storage.campaign(id: summary.id) else { continue }
                if now.finishedAt != nil { break }
                report.showProgress(fraction: now.devices > 0 ? Double(now.answered) / Double(now.devices) : nil)
            }
            let timeout = Double(transport?.timeoutMilliseconds ?? 10_000) / 1000
            group.stop(within: .seconds(min(timeout, 10)))
            group.waitUntilStopped()
        }
        fleet.shutdown()
        let stopped = stopper.failure
        let reportFailure = writeReport(storage: storage, store: store, campaign: summary, report: &report,
                                        notSent: stopped ?? TransportFailure(.notStarted, "the send was interrupted before this device was sent"))
        report.printSummary()
        if let reportFailure { return finish(reportFailure) }
        let unfinished = report.notSent > 0
        if store.temporary && !unfinished { store.remove() }
        if unfinished { Output.error("pushgate send: the rest is kept in \(TextSafety.quoted(store.folder)); to send it, run: \(resumeCommand(store))") }
        if interrupted {
            Output.error("pushgate send: interrupted (\(report.notSent) devices not sent)")
            return Self.interrupted
        }
        if let stopped {
            var reason = stopped.message
            if let hold = fleet.tokens.first?.hold(), hold.kind == .paused {
                reason += " (until \(CampaignJSON.timestamp(Double(hold.until)))); run again after that"
            }
            Output.error("pushgate send: \(reason) (\(report.notSent) devices not sent)")
            return ExitStatus.usage
        }
        if let reason = report.stopReason {
            Output.error("pushgate send: \(reason) (\(report.notSent) devices not sent)")
            return ExitStatus.usage
        }
        return report.allDelivered ? ExitStatus.ok : ExitStatus.findings
    }

    private func finish(_ failure: CLIFailure) -> Int32 {
        prepared.fleet.shutdown()
        Output.error("pushgate send: \(failure.message)")
        return failure.status
    }

    /// The store's send when it holds this one (resumed), a new one when it is empty, a
    /// refusal when it holds another.
    private func campaign(in storage: SQLiteCampaignStorage, campaigns: DurableCampaigns, store: SendStore,
                          report: inout SendReport) -> Result<CampaignSummary, CLIFailure> {
        let shown = TextSafety.quoted(store.folder)
        do throws(StorageError) {
            if let record = try campaigns.previous(key: SendStore.identityKey, owner: "") {
                guard record.requestSHA256 == fingerprint, let summary = try storage.campaign(id: record.campaignID) else {
                    return .failure(CLIFailure(message: "--store \(shown) holds another send (campaign \(record.campaignID), stored \(CampaignJSON.timestamp(record.createdAt))): "
                                               + "not this campaign, app, environment or device list; give another folder, or remove it", status: ExitStatus.usage))
                }
                Output.error("pushgate send: resuming the send kept in \(shown): \(summary.answered) of \(summary.devices) devices already answered")
                rereportInvalidLines(&report)
                return .success(summary)
            }
            guard try storage.campaigns(limit: 1, before: nil).isEmpty else {
                return .failure(CLIFailure(message: "--store \(shown) holds campaigns that are not a send's (a serve store?); give a folder of its own",
                                           status: ExitStatus.usage))
            }
            let plan = prepared.plan
            let tokens = SendDeviceTokens(plan: plan, reader: prepared.reader, limit: deviceLimit,
                                          devicesPath: devicesPathShown, report: report)
            let accepted = try campaigns.accept(plan, tokens: TokenFeed(tokens), dryRun: prepared.isDryRun,
                                                idempotency: (key: SendStore.identityKey, sha256: fingerprint), rejectDuplicateTokens: false,
                                                app: prepared.app.name, environment: prepared.apns.environment.rawValue)
            report = tokens.report
            if tokens.overLimit, let deviceLimit {
                report.stop("more than \(deviceLimit) devices from \(TextSafety.quoted(devicesPathShown)), which could not be counted before sending "
                            + "(not a regular file): the rest is not sent; give a file, or --confirm-devices with the exact count [confirmationRequired]")
            }
            guard case .created(let id, _, _, _) = accepted, let summary = try storage.campaign(id: id) else {
                return .failure(CLIFailure(message: "--store \(shown): the campaign was not stored", status: ExitStatus.usage))
            }
            return .success(summary)
        } catch {
            return .failure(.configuration("--store \(shown): \(error.description)"))
        }
    }

    private var devicesPathShown: String { devicesPath == "-" ? standardInputName : devicesPath ?? "" }

    /// A resumed send does not store the devices file again, but reports its invalid lines
    /// again (they are part of its result); a pipe was read once, by the first run.
    private func rereportInvalidLines(_ report: inout SendReport) {
        guard let devicesPath, devicesPath != "-", SendCommand.isRegularFile(devicesPath),
              let reader = try? DeviceLineReader(path: devicesPath) else { return }
        while let item = try? reader.next() {
            if case .invalid(let line, let problem) = item { report.recordInvalid(line: line, problem: problem, source: devicesPathShown) }
        }
    }

    /// Every device's recorded result, in device order, a page at a time.
    private func writeReport(storage: SQLiteCampaignStorage, store: SendStore, campaign: CampaignSummary, report: inout SendReport,
                             notSent: TransportFailure) -> CLIFailure? {
        func unreadable(_ error: StorageError) -> CLIFailure {
            .configuration("--store \(TextSafety.quoted(store.folder)): cannot read the results: \(error.description)")
        }
        let dryRun = prepared.fleet.sender(app: prepared.app.name, environment: prepared.apns.environment.rawValue, dryRun: true) as? DryRunSender
        let plan = prepared.plan
        // The text report says nothing per delivered device: those are counted, not read.
        var states: Set<DeliveryState>?
        if !json {
            do throws(StorageError) {
                guard let final = try storage.campaign(id: campaign.id) else { return nil }
                report.countAnswered(delivered: final.counts[.delivered] ?? 0, dryRuns: final.counts[.dryRun] ?? 0)
            } catch {
                return unreadable(error)
            }
            states = Set(DeliveryState.allCases).subtracting([.delivered, .dryRun])
        }
        var offset = 0
        let page = 4096
        while true {
            let rows: [DeliveryResultRow]
            do throws(StorageError) {
                rows = try storage.results(campaign: campaign.seq, states: states, offset: offset, limit: page)
            } catch {
                return unreadable(error)
            }
            for row in rows {
                report.record(row, notSent: notSent) { row in
                    // The dry run's request, built again exactly as it was signed (same apns-id).
                    guard let dryRun, let id = row.apnsID else { return nil }
                    let request: APNsRequest? = row.index < plan.devices.count
                        ? plan.plannedRequest(forDeviceAt: row.index, apnsID: id)
                        : try? plan.request(for: Device(token: row.token), apnsID: id)
                    return request.map { dryRun.prepare($0) }
                }
            }
            if rows.count < page { return nil }
            offset += rows.count
        }
    }

    /// This command again, with `--store` naming the folder kept.
    private func resumeCommand(_ store: SendStore) -> String {
        var words = ["pushgate"] + arguments
        if store.temporary { words += ["--store", store.folder] }
        return words.map(Self.shellQuoted).joined(separator: " ")
    }

    static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || "-_./=:@,+".utf8.contains(c)
        }
        return plain ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

extension CampaignSummary {
    /// Devices with a final result (not pending, in flight or waiting for another attempt).
    var answered: Int { counts.filter { $0.key.isFinal }.values.reduce(0, +) }
}
