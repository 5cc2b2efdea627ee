#if canImport(Glibc)
import Glibc
#endif
import APNs
import Outbox
import Gateway
import PostgresStorage
import Storage
import StrictJSON
import Timing

/// The durable half of `serve`: the database, the dispatcher that drains it, and the
/// dead-token webhook, built from the `storage`, `dispatcher` and `webhook` sections.
struct DurableAssembly {
    let settings: DurableSettings
    let storage: any CampaignStorage
    let dispatcher: Dispatcher
    let webhook: FeedbackWebhook?
    let retention: Retention
    let campaigns: DurableCampaigns

    /// How a command uses the storage.
    enum Access: Equatable {
        /// `serve`: the process running the outbox (SQLite's one owner; on PostgreSQL one
        /// instance among several, named in its leases and heartbeat).
        case owner(InstanceID)
        /// `send`, `jwt`, `campaigns pause|resume|cancel`: small writes next to a running server.
        case shared
        /// `campaigns`: reads only, never migrates.
        case readOnly
    }

    /// Opens the configured storage: the PostgreSQL database of `storage.url`, else the
    /// SQLite file (creating its folder and file if needed). Both migrate unless read-only.
    static func openStorage(_ settings: DurableSettings.Storage, access: Access = .shared) -> Result<any CampaignStorage, CLIFailure> {
        if settings.url != nil {
            let instance: String
            switch access {
            case .owner(let me): instance = LeaseTerms(instance: me, seconds: 0).owner
            case .shared, .readOnly: instance = "cli/" + LeaseTerms(instance: InstanceID.current(now: processClock.wallSeconds()), seconds: 0).owner
            }
            return openPostgres(settings, instance: instance, readOnly: access == .readOnly).map { $0 as any CampaignStorage }
        }
        makeParentDirectory(of: settings.path)
        let sqliteAccess: SQLiteCampaignStorage.Access = switch access {
        case .owner(let me): .owner(me)
        case .shared: .shared
        case .readOnly: .readOnly
        }
        do throws(StorageError) {
            return .success(try SQLiteCampaignStorage(
                path: settings.path,
                options: .init(synchronousFull: settings.synchronousFull, busyTimeoutMilliseconds: Int32(settings.busyTimeoutMilliseconds),
                               access: sqliteAccess)))
        } catch {
            return .failure(storageFailure(error, settings))
        }
    }

    /// The PostgreSQL database of `settings.url`, its password read from
    /// `storage.passwordFile` when one is named. `inspectOnly`: neither migrate nor refuse
    /// another schema version (`storage status`).
    static func openPostgres(_ settings: DurableSettings.Storage, instance: String, readOnly: Bool,
                             inspectOnly: Bool = false) -> Result<PostgresCampaignStorage, CLIFailure> {
        var password = settings.password
        if let file = settings.passwordFile {
            switch readFile(file, limit: 4096, at: .file(file, at: .root)) {
            case .failure(let problem): return .failure(.configuration("storage.passwordFile \(TextSafety.quoted(file)): \(problem.message)"))
            case .success(let bytes):
                // One line; the newline an editor adds is not part of the password.
                var text = String(decoding: bytes, as: UTF8.self)
                while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
                password = text
            }
        }
        var options = PostgresCampaignStorage.Options(url: settings.url ?? "", password: password, poolSize: settings.poolSize,
                                                      instance: instance, webhookLeaseSeconds: settings.webhookLeaseSeconds, readOnly: readOnly,
                                                      clock: processClock)
        options.inspectOnly = inspectOnly
        options.sessionLimits = .forLease(seconds: settings.dispatcherLeaseSeconds)
        do throws(StorageError) {
            return .success(try PostgresCampaignStorage(options: options))
        } catch {
            return .failure(storageFailure(error, settings))
        }
    }

    /// `storage in use by pid N on HOST since T (database PATH)` for a second owner; the
    /// code and the engine's message otherwise, naming the file or the URL without its
    /// password. Exit 2 either way.
    static func storageFailure(_ error: StorageError, _ settings: DurableSettings.Storage) -> CLIFailure {
        let shown = TextSafety.escapedForDisplay(settings.location)
        if error.code == .inUse { return .configuration("\(error.message) (database \(shown))") }
        return .configuration("storage \(shown): \(error.description)")
    }

    static func assemble(_ settings: DurableSettings, storage: any CampaignStorage, fleet: APNsFleet,
                         instance: InstanceID, defaultInFlight: Int, metrics: Metrics,
                         log: @escaping @Sendable (String) -> Void) -> DurableAssembly {
        let webhook = settings.webhook.map { FeedbackWebhook(settings: $0, storage: storage, clock: processClock, log: log) }
        let dispatcher = Self.dispatcher(
            settings.dispatcher, storage: storage, fleet: fleet, instance: instance, defaultInFlight: defaultInFlight,
            metrics: metrics, log: log, onDeadTokens: { webhook?.wake() },
            housekeeping: {
                _ = try? storage.purgeIdempotencyKeys(olderThan: processClock.wallSeconds() - settings.storage.idempotencyRetentionSeconds)
                // The heartbeat `pushgate storage status` shows, once a minute.
                _ = storage.checkWritable(now: processClock.wallSeconds())
            })
        let retention = Retention(storage: storage, options: .init(retentionSeconds: settings.storage.retentionSeconds,
                                                                   liveActivityTokenRetentionSeconds: settings.storage.liveActivityTokenRetentionSeconds),
                                  clock: processClock, log: log)
        return DurableAssembly(settings: settings, storage: storage, dispatcher: dispatcher, webhook: webhook, retention: retention,
                               campaigns: DurableCampaigns(storage: storage, dispatcher: dispatcher,
                                                           idempotencyRetentionSeconds: settings.storage.idempotencyRetentionSeconds,
                                                           transactionalMaxDevices: settings.lanes.transactionalMaxDevices,
                                                           liveActivityLimits: settings.storage.liveActivityLimits,
                                                           clock: processClock))
    }

    /// The dispatcher of `serve` and of `send`: each campaign goes out with its app's
    /// credentials in its environment, through the fleet's senders (`through` wraps each,
    /// for `send` to notice the failure that stops it); a route whose key is held or whose
    /// pool cannot reach APNs waits while the others go on.
    static func dispatcher(_ d: DurableSettings.Dispatcher, storage: any CampaignStorage, fleet: APNsFleet, instance: InstanceID,
                           defaultInFlight: Int, metrics: any OutboxMetrics, log: @escaping @Sendable (String) -> Void,
                           onDeadTokens: @escaping @Sendable () -> Void = {}, housekeeping: @escaping @Sendable () -> Void = {},
                           onSettled: @escaping @Sendable () -> Void = {},
                           through wrap: @escaping @Sendable (any NotificationSender) -> any NotificationSender = { $0 }) -> Dispatcher {
        Dispatcher(
            storage: storage, sender: wrap(fleet.sender(app: "", environment: "", dryRun: false)),
            dryRunSender: wrap(fleet.sender(app: "", environment: "", dryRun: true)), metrics: metrics,
            // A campaign's app and environment wait while their key is held (until its
            // pause ends or its next probe is due) or their pool cannot reach APNs (looked
            // at again every second: the transport probes on its own); other apps go on.
            heldUntil: { route in
                fleet.heldUntil(app: route.app, environment: route.environment, dryRun: route.dryRun, now: processClock.wallSeconds())
            },
            options: .init(inFlight: d.inFlight ?? defaultInFlight, claimBatch: d.claimBatch, maxAttempts: d.maxAttempts,
                           retryBaseSeconds: d.retryBaseSeconds, retryMaxSeconds: d.retryMaxSeconds,
                           lease: LeaseTerms(instance: instance, seconds: d.leaseSeconds)),
            clock: processClock, log: log, onDeadTokens: onDeadTokens, housekeeping: housekeeping, onSettled: onSettled,
            senders: { message in wrap(fleet.sender(app: message.app, environment: message.environment, dryRun: message.dryRun)) })
    }

    /// `mkdir -p` of the folder a file goes in (the shipped `var/` does not exist in a fresh clone).
    static func makeParentDirectory(of path: String) {
        var prefix = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (i, part) in parts.enumerated() {
            prefix += (i == 0 ? "" : "/") + part
            if !prefix.isEmpty && prefix != "." && prefix != ".." { mkdir(prefix, 0o755) }
        }
    }
}
