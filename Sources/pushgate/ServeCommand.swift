#if canImport(Glibc)
import Glibc
#endif
import APNs
import Outbox
import DeepLinks
import Dispatch
import Gateway
import HTTPServer
import OptionTable
import Payloads
import Storage
import StrictJSON
import Timing

/// `pushgate serve [--config PATH] [--listen HOST:PORT]`: the gateway's HTTP API. Runs until SIGTERM or
/// SIGINT, then stops accepting, lets requests and sends in flight finish up to the
/// configured deadline, and exits 0.
enum ServeCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["serve"], summary: "run the HTTP API (until SIGTERM or SIGINT)",
            options: [ConfigOption.option,
                      .value("listen", "HOST:PORT", "the address to listen on, e.g. 127.0.0.1:8080 or [::1]:8080 (wins over server.listen)")],
            notes: ["Exit status: 0 stopped by a signal, 2 configuration, storage or listening error."]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        // Caught from the start: a signal that comes while starting up (the API answers
        // before the "listening" line) stops the server once it is up, rather than being lost.
        let stopSignal = StopSignal()
        let assembled: Assembled
        switch assemble(configPath: configPath(args["config"]), listen: args["listen"]) {
        case .failure(let start):
            // Once the configuration named the log format, the failure is a log line in it.
            if let log = start.log {
                log.message(.error, "pushgate serve: \(start.failure.message)")
                log.flush()
            } else {
                Output.error("pushgate serve: \(start.failure.message)")
            }
            return start.failure.status
        case .success(let value):
            assembled = value
        }

        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: assembled.settings.http, responder: assembled.service, clock: processClock)
        } catch {
            assembled.log.message(.error, "pushgate serve: \(error.message) [\(error.code.rawValue)]")
            return ExitStatus.usage
        }
        // Sending starts only once the API is up: a server that cannot listen sends nothing.
        do throws(StorageError) {
            try assembled.durable.dispatcher.start()
        } catch {
            assembled.log.message(.error, "pushgate serve: \(DurableAssembly.storageFailure(error, assembled.durable.settings.storage).message)")
            _ = server.shutdown(deadlineSeconds: 1)
            return ExitStatus.usage
        }
        // Every long-running part in one group: the API, its readiness checks, the
        // dispatcher, the webhook, retention.
        let log = assembled.log
        let durable = assembled.durable
        let services: [any Service] = [server] + (assembled.service.readiness.map { [$0] } ?? [])
            + [durable.dispatcher] + (durable.webhook.map { [$0] } ?? []) + [durable.retention]
        let group = ServiceGroup(services, clock: processClock, log: { log.message(.error, $0) })
        group.start()
        let host = assembled.settings.http.host.contains(":") ? "[\(assembled.settings.http.host)]" : assembled.settings.http.host
        log.message(.info, "pushgate: listening on http://\(host):\(server.port)"
            + (assembled.dryRun ? " (dry run: nothing is sent to APNs)" : "")
            + (assembled.settings.apiKeys.isEmpty ? " (no API keys: loopback only)" : ""))
        for line in firstSteps(host: host, port: server.port, configPath: configPath(args["config"]),
                               needsKey: !assembled.settings.apiKeys.isEmpty) {
            log.message(.info, line)
        }
        // Under systemd (Type=notify): the API listens and the storage took a write.
        let notifier = ServiceNotifier()
        if let problem = notifier.notify("READY=1\nSTATUS=listening on \(host):\(server.port)") {
            log.message(.warn, "pushgate: \(problem)")
        }

        stopSignal.wait(flushingEvery: 0.2, log: log)
        notifier.notify("STOPPING=1\nSTATUS=stopping: finishing requests and sends in flight")
        // One deadline for the whole stop, on the monotonic clock. At once: no claim and no
        // APNs request starts, and new connections are refused (the listening socket is
        // closed); then requests and sends in flight finish side by side until the deadline,
        // when every service has returned (sends still unanswered have their leases given
        // back; the webhook's request in flight is abandoned, its batch kept).
        durable.dispatcher.beginStop()
        // Requests already handed to a transport but not yet on the wire are given back too.
        assembled.fleet.stopStartingRequests()
        let deadline = assembled.settings.shutdownDeadlineSeconds
        log.message(.info, "pushgate: stopping: finishing requests and sends in flight (deadline \(deadline) s)")
        group.stop(within: .seconds(deadline))
        group.waitUntilStopped()
        assembled.fleet.shutdown()
        assembled.log.flush()
        if server.requestsInFlight > 0 || durable.dispatcher.inFlight > 0 {
            log.message(.warn, "pushgate: deadline passed with work unfinished (requests: \(server.requestsInFlight), sends: \(durable.dispatcher.inFlight), which are sent again at the next start)")
        }
        log.message(.info, "pushgate: stopped")
        return ExitStatus.ok
    }

    /// The start-up's last lines, for whoever just ran `make run`: a campaign to post (the
    /// sample beside the configuration, when it is there) and the preview page.
    static func firstSteps(host: String, port: Int, configPath: String, needsKey: Bool) -> [String] {
        let reachable = host == "0.0.0.0" ? "127.0.0.1" : host == "[::]" ? "[::1]" : host
        let base = "http://\(reachable):\(port)"
        var lines: [String] = []
        let sample = GatewayConfig.resolve("campaigns/inline-alert.json", in: ConfigReader.directory(of: configPath))
        if access(sample, R_OK) == 0 {
            let key = needsKey ? " -H 'authorization: Bearer YOUR_KEY'" : ""
            lines.append("pushgate: try it: curl -s -XPOST \(base)/v1/campaigns -H 'content-type: application/json'\(key) --data-binary @\(TextSafety.escapedForDisplay(sample))")
        }
        lines.append("pushgate: the preview page: \(base)/ui")
        return lines
    }

    struct Assembled {
        let settings: ServerSettings
        let service: GatewayService
        let durable: DurableAssembly
        let fleet: APNsFleet
        let log: RequestLog
        let dryRun: Bool
    }

    /// A failure while assembling, with the log once the configuration has named its format.
    struct StartFailure: Error {
        let failure: CLIFailure
        let log: RequestLog?
    }

    /// Configuration → route table, templates, APNs, settings → the service. Any failure
    /// is a configuration error (exit 2) naming the file and the place in it (or the
    /// variable, or `--listen`).
    static func assemble(configPath: String, listen: String? = nil) -> Result<Assembled, StartFailure> {
        var log: RequestLog?
        return assembleService(configPath: configPath, listen: listen, log: &log).mapError { StartFailure(failure: $0, log: log) }
    }

    private static func assembleService(configPath: String, listen: String?, log madeLog: inout RequestLog?) -> Result<Assembled, CLIFailure> {
        let config: GatewayConfig
        switch GatewayConfig.load(path: configPath) {
        case .failure(let failure): return .failure(failure)
        case .success(let c): config = c
        }
        let settings: ServerSettings
        switch serverSettings(config, listen: listen) {
        case .failure(let failure): return .failure(failure)
        case .success(let s): settings = s
        }
        // Every app's credentials, before anything is opened.
        var reader = config.reader
        for app in config.apps { APNsConfiguration.requireCredentials(app.apns, reader: &reader, at: app.path.appending("apns")) }
        guard reader.isValid else { return .failure(.diagnostics(reader.diagnostics)) }
        // From here on the log format is known: every message goes through the log.
        let requestFD: Int32 = switch settings.requestLog {
        case "off": -1
        case "stdout": 1
        default: 2
        }
        let log = RequestLog(fd: requestFD, messageFD: 2, format: settings.logFormat, level: settings.logLevel, clock: processClock)
        madeLog = log
        let durableSettings = config.durable
        let storage: any CampaignStorage
        let instance = InstanceID.current(now: processClock.wallSeconds())
        switch DurableAssembly.openStorage(durableSettings.storage, access: .owner(instance)) {
        case .failure(let failure): return .failure(failure)
        case .success(let s): storage = s
        }
        // Rows from before campaigns named their app are the one app's.
        if config.apps.count == 1 {
            do throws(StorageError) { _ = try storage.adoptUnnamedRows(app: config.apps[0].name) } catch {
                return .failure(DurableAssembly.storageFailure(error, durableSettings.storage))
            }
        }
        // The first heartbeat (then one a minute from the dispatcher's housekeeping). A
        // storage that takes no write cannot record a send: the start fails (systemd's
        // Restart=on-failure tries again) rather than report ready.
        if let problem = storage.checkWritable(now: processClock.wallSeconds()) {
            return .failure(.configuration("storage \(TextSafety.escapedForDisplay(durableSettings.storage.location)): \(problem)"))
        }
        // One provider token per (team, key), kept in the storage for every process; one
        // connection pool per (APNs URL, team, key); one sender per app and environment.
        let fleet: APNsFleet
        switch APNsSetup.fleet(config, apps: config.apps.map { ($0, $0.apns) }, tokenStore: SharedProviderTokens(storage: storage)) {
        case .failure(let failure): return .failure(failure)
        case .success(let made): fleet = made
        }
        for notice in fleet.notices { log.message(.warn, notice) }
        let first = config.apps[0].apns
        let metrics = Metrics()
        let durable = DurableAssembly.assemble(
            durableSettings, storage: storage, fleet: fleet, instance: instance,
            defaultInFlight: DurableSettings.Dispatcher.defaultInFlight(
                connections: first.connections, streamsPerConnection: first.maxConcurrentStreams),
            metrics: metrics,
            log: { log.message(.warn, $0) })
        metrics.observeJournalBytes { storage.journalBytesWritten }
        metrics.observeSendingPause { fleet.pausedUntil().map { Double($0) - processClock.wallSeconds() } ?? 0 }
        metrics.observeAPNsReachability { fleet.transports.allSatisfy { $0.reachability == .reachable } }
        metrics.observeKeyHolds {
            fleet.tokens.map { tokens in
                (keyId: tokens.identity.keyId, stopped: tokens.hold().flatMap { $0.kind == .stopped ? $0.reason.rawValue : nil })
            }
        }
        // Campaigns a corrupt segment failed: logged once each, listed by `/readyz`.
        let segmentFailures = SegmentFailureWatch(storage: storage, startedAt: processClock.wallSeconds(),
                                                  clock: { processClock.wallSeconds() }, log: { log.message(.error, $0) })
        let readiness = [
            ReadinessCheck(name: "configuration") { nil },
            // APNs unreachable from every pool: campaigns wait queued, so the service is not
            // ready to deliver. (One pool of several: `apns_apps` says which apps wait.)
            ReadinessCheck(name: "apns") {
                var reasons: [String] = []
                for transport in fleet.transports {
                    guard case .unreachable(let since, let lastError) = transport.reachability else { return nil }
                    reasons.append("unreachable since \(CampaignJSON.timestamp(Double(since))) (last error \(lastError))")
                }
                return reasons.first
            },
            // APNs refused every key: nothing can be delivered until one is fixed (or a probe
            // finds it accepted again); campaigns wait queued. One key of several: the other
            // apps still send, and `apns_apps` says which apps wait.
            ReadinessCheck(name: "signing_key") {
                var stopped: [String] = []
                for tokens in fleet.tokens {
                    do { _ = try tokens.currentToken() } catch { return "cannot sign a provider token with key \(tokens.identity.keyId)" }
                    if let hold = tokens.hold(), hold.kind == .stopped {
                        stopped.append("\(hold.explanation) since \(CampaignJSON.timestamp(Double(hold.since))); "
                            + "next probe at \(CampaignJSON.timestamp(Double(hold.until)))")
                    }
                }
                return stopped.count == fleet.tokens.count ? stopped.first : nil
            },
            // Not a reason to take the API out of service: the pause ends by itself,
            // campaigns are still accepted and wait in the outbox; the check says why
            // nothing is being sent.
            ReadinessCheck(name: "apns_sending", blocking: false) {
                for tokens in fleet.tokens {
                    if let hold = tokens.hold(), hold.kind == .paused {
                        return "paused until \(CampaignJSON.timestamp(Double(hold.until))): APNs answered TooManyProviderTokenUpdates for key \(hold.keyId)"
                    }
                }
                return nil
            },
            // Each app whose campaigns wait while the others' are sent.
            ReadinessCheck(name: "apns_apps", blocking: false) {
                let held = fleet.heldApps()
                guard !held.isEmpty else { return nil }
                return "waiting: " + held.map { "\($0.app) (\($0.environment.rawValue)): \($0.why)" }.joined(separator: "; ")
            },
            // Read-only: a probe must never cause a write (and an fsync).
            ReadinessCheck(name: "storage") { storage.checkReady() },
            // Not blocking: one bad campaign must not take the instance out of service. The
            // monitor's rounds are what reads the storage (at most once a second) and logs.
            ReadinessCheck(name: "segments", blocking: false) {
                segmentFailures.refresh()
                return segmentFailures.check()
            },
        ]
        let components = GatewayComponents(
            apps: AppDirectory(config.apps.map(\.gatewayApp)),
            sender: fleet.sender(app: config.apps[0].name, configuration: first),
            dryRunSender: fleet.sender(app: config.apps[0].name, environment: first.environment.rawValue, dryRun: true),
            configuredIsDryRun: first.dryRun, readiness: readiness, sendGuard: config.sendGuard,
            channels: ChannelsCommand.lookup(config.apps, fleet: fleet))
        do throws(APIRouter.ConflictError) {
            let service = try GatewayAPI.makeService(components, settings: settings, metrics: metrics, log: log, campaigns: durable.campaigns,
                                                     clock: processClock)
            return .success(Assembled(settings: settings, service: service, durable: durable, fleet: fleet,
                                      log: log, dryRun: first.dryRun))
        } catch {
            // The API's own routes conflict: a bug, not the operator's; still exit 2.
            return .failure(.configuration("internal error: \(error)"))
        }
    }

    /// The `server` section with `--listen` applied; a non-loopback address with no API
    /// keys is refused, blamed on whichever set the address.
    static func serverSettings(_ config: GatewayConfig, listen: String?) -> Result<ServerSettings, CLIFailure> {
        var settings = config.server
        var location = config.reader.where(JSONPath.root.appending("server").appending("listen"))
        if let listen {
            location = .option("--listen")
            guard let (host, port) = ServerSettings.parseListen(listen) else {
                return .failure(.diagnostics([Diagnostic(.invalidValue, at: location, ServerSettings.listenProblem(listen) ?? "")]))
            }
            settings.http.host = host
            settings.http.port = port
        }
        if let problem = settings.exposureProblem {
            return .failure(.diagnostics([Diagnostic(.invalidValue, at: location, problem)]))
        }
        return .success(settings)
    }
}

/// SIGINT and SIGTERM, caught from the moment this is made (no longer the default "die"),
/// so none sent between start-up and `wait` is lost.
final class StopSignal {
    private let stop: Wakeup
    /// Set by SIGINT or SIGTERM (a `nudge` wakes the waiter without it).
    private let arrived: Flag
    private let queue: DispatchQueue
    private let sources: [DispatchSourceSignal]

    init() {
        // The default action (exit) off first; the dispatch sources then take the signals.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stop = Wakeup()
        let arrived = Flag()
        let queue = DispatchQueue(label: "pushgate.signals")
        self.stop = stop
        self.arrived = arrived
        self.queue = queue
        sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                arrived.raise()
                stop.signal()
            }
            source.resume()
            return source
        }
    }

    /// Whether SIGINT or SIGTERM came, waiting at most `seconds` for one (or a `nudge`).
    func received(within seconds: Double) -> Bool {
        stop.wait(for: .seconds(seconds))
        return arrived.isRaised
    }

    /// Ends a `received(within:)` wait early, as no signal (callable from any thread).
    var nudge: @Sendable () -> Void { { [stop] in stop.signal() } }

    /// Blocks the calling thread until SIGINT or SIGTERM, flushing the request log on a timer.
    func wait(flushingEvery interval: Double, log: RequestLog) {
        while !(stop.wait(for: .seconds(interval)) && arrived.isRaised) { log.flush() }
        sources.forEach { $0.cancel() }
    }
}

/// The process environment, for settings that environment variables override.
func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let eq = text.firstIndex(of: "=") {
            result[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        pointer += 1
    }
    return result
}
