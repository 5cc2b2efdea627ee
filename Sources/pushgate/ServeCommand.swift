#if canImport(Glibc)
import Glibc
#endif
import APNs
import DeepLinks
import Dispatch
import Gateway
import HTTPServer
import Payloads
import Storage
import StrictJSON
import Timing

/// `pushgate serve [--config PATH] [--listen HOST:PORT]`: the gateway's HTTP API. Runs until SIGTERM or
/// SIGINT, then stops accepting, lets requests and sends in flight finish up to the
/// configured deadline, and exits 0.
enum ServeCommand {
    static let usage = "usage: pushgate serve [--config PATH] [--listen HOST:PORT]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "serve", arguments, usage: usage, valued: ["config", "listen"])
        } catch {
            return error.status
        }
        // Caught from the start: a signal that comes while starting up (the API answers
        // before the "listening" line) stops the server once it is up, rather than being lost.
        let stopSignal = StopSignal()
        let assembled: Assembled
        switch assemble(configPath: configPath(args[option: "config"]), listen: args[option: "listen"]) {
        case .failure(let failure):
            Output.error("pushgate serve: \(failure.message)")
            return failure.status
        case .success(let value):
            assembled = value
        }

        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: assembled.settings.http, responder: assembled.service)
        } catch {
            Output.error("pushgate serve: \(error.message) [\(error.code.rawValue)]")
            return ExitStatus.usage
        }
        // Sending starts only once the API is up: a server that cannot listen sends nothing.
        do throws(StorageError) {
            try assembled.durable.dispatcher.start()
        } catch {
            Output.error("pushgate serve: storage \(TextSafety.escapedForDisplay(assembled.durable.settings.storage.path)): \(error.description)")
            _ = server.shutdown(deadlineSeconds: 1)
            return ExitStatus.usage
        }
        assembled.durable.webhook?.start()
        let host = assembled.settings.http.host.contains(":") ? "[\(assembled.settings.http.host)]" : assembled.settings.http.host
        let log = assembled.log
        log.message(.info, "pushgate: listening on http://\(host):\(server.port)"
            + (assembled.dryRun ? " (dry run: nothing is sent to APNs)" : "")
            + (assembled.settings.apiKeys.isEmpty ? " (no API keys: loopback only)" : ""))

        stopSignal.wait(flushingEvery: 0.2, log: log)
        log.message(.info, "pushgate: stopping: finishing requests and sends in flight (deadline \(assembled.settings.shutdownDeadlineSeconds) s)")
        let deadline = assembled.settings.shutdownDeadlineSeconds
        let requestsDrained = server.shutdown(deadlineSeconds: deadline)
        let sendsDrained = assembled.durable.dispatcher.stop(deadlineSeconds: deadline)
        assembled.durable.webhook?.stop()
        assembled.delivery.transport?.shutdown()
        assembled.log.flush()
        if !requestsDrained || !sendsDrained {
            log.message(.warn, "pushgate: deadline passed with work unfinished (requests: \(server.requestsInFlight), sends: \(assembled.durable.dispatcher.inFlight), which are sent again at the next start)")
        }
        log.message(.info, "pushgate: stopped")
        return ExitStatus.ok
    }

    struct Assembled {
        let settings: ServerSettings
        let service: GatewayService
        let durable: DurableAssembly
        let delivery: APNsDelivery
        let log: RequestLog
        let dryRun: Bool
    }

    /// Configuration → route table, templates, APNs, settings → the service. Any failure
    /// is a configuration error (exit 2) naming the file and the place in it (or the
    /// variable, or `--listen`).
    static func assemble(configPath: String, listen: String? = nil) -> Result<Assembled, CLIFailure> {
        let config: GatewayConfig
        switch GatewayConfig.load(path: configPath) {
        case .failure(let failure): return .failure(failure)
        case .success(let c): config = c
        }
        // Several apps in one server come with per-app sending (not built yet).
        guard config.apps.count == 1 else {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(config.source)) configures \(config.apps.count) apps (\(ConfigReader.list(config.apps.map(\.name)))); serve runs a single app so far: give each app its own configuration"))
        }
        let app = config.apps[0]
        let table = app.routes
        let settings: ServerSettings
        switch serverSettings(config, listen: listen) {
        case .failure(let failure): return .failure(failure)
        case .success(let s): settings = s
        }
        let durableSettings = config.durable
        let storage: SQLiteCampaignStorage
        let instance = InstanceID.current(now: SystemClock().wallSeconds())
        switch DurableAssembly.openStorage(durableSettings.storage, access: .owner(instance)) {
        case .failure(let failure): return .failure(failure)
        case .success(let s): storage = s
        }
        // The provider token lives in the same storage: one token per key for every process.
        let apnsConfiguration: APNsConfiguration
        let delivery: APNsDelivery
        switch APNsSetup.configuration(config, app: app, forceDryRun: false)
            .flatMap({ c in APNsSetup.delivery(c, config: config, app: app, tokenStore: SharedProviderTokens(storage: storage)).map { (c, $0) } }) {
        case .failure(let failure): return .failure(failure)
        case .success(let (c, d)):
            apnsConfiguration = c
            delivery = d
        }
        let planner = app.planner()
        let metrics = Metrics()
        let dryRunSender = DryRunSender(tokens: delivery.tokens, baseURL: apnsConfiguration.baseURL, topicOverride: apnsConfiguration.topic)
        let durable = DurableAssembly.assemble(
            durableSettings, storage: storage, sender: delivery.sender, dryRunSender: dryRunSender, tokens: delivery.tokens,
            transport: delivery.transport, instance: instance,
            defaultInFlight: max(1, apnsConfiguration.connections * apnsConfiguration.maxConcurrentStreams), metrics: metrics)
        let tokens = delivery.tokens
        metrics.observeSendingPause { tokens.pausedUntil().map { Double($0) - SystemClock().wallSeconds() } ?? 0 }
        let transport = delivery.transport
        metrics.observeAPNsReachability { transport?.reachability ?? .reachable == .reachable }
        let readiness = [
            ReadinessCheck(name: "configuration") { nil },
            // APNs unreachable: campaigns wait queued, so the service is not ready to deliver.
            ReadinessCheck(name: "apns") {
                guard case .unreachable(let since, let lastError)? = transport?.reachability else { return nil }
                return "unreachable since \(CampaignJSON.timestamp(Double(since))) (last error \(lastError))"
            },
            ReadinessCheck(name: "signing_key") {
                do { _ = try tokens.currentToken(); return nil } catch { return "cannot sign a provider token" }
            },
            // Not a reason to take the API out of service: campaigns are still accepted
            // and wait in the outbox; the check says why nothing is being sent.
            ReadinessCheck(name: "apns_sending", blocking: false) {
                tokens.pausedUntil().map {
                    "paused until \(CampaignJSON.timestamp(Double($0))): APNs answered TooManyProviderTokenUpdates for key \(tokens.identity.keyId)"
                }
            },
            // Read-only: a probe must never cause a write (and an fsync).
            ReadinessCheck(name: "storage") { storage.checkReady() },
        ]
        let components = GatewayComponents(
            routeTable: table, planner: planner, sender: delivery.sender,
            dryRunSender: dryRunSender,
            configuredIsDryRun: apnsConfiguration.dryRun, readiness: readiness, sendGuard: config.sendGuard)
        let log: RequestLog
        let requestFD: Int32 = switch settings.requestLog {
        case "off": -1
        case "stdout": 1
        default: 2
        }
        log = RequestLog(fd: requestFD, messageFD: 2, format: settings.logFormat, level: settings.logLevel)
        do throws(APIRouter.ConflictError) {
            let service = try GatewayAPI.makeService(components, settings: settings, metrics: metrics, log: log, campaigns: durable.campaigns)
            return .success(Assembled(settings: settings, service: service, durable: durable, delivery: delivery,
                                      log: log, dryRun: apnsConfiguration.dryRun))
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
    private let stop: DispatchSemaphore
    private let queue: DispatchQueue
    private let sources: [DispatchSourceSignal]

    init() {
        // The default action (exit) off first; the dispatch sources then take the signals.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "pushgate.signals")
        self.stop = stop
        self.queue = queue
        sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
    }

    /// Blocks the calling thread until SIGINT or SIGTERM, flushing the request log on a timer.
    func wait(flushingEvery interval: Double, log: RequestLog) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { log.flush() }
        timer.resume()
        stop.wait()
        timer.cancel()
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
