#if canImport(Glibc)
import Glibc
#endif
import APNs
import Outbox
import Gateway
import Storage
import StrictJSON
import Timing

/// The durable half of `serve`: the database, the dispatcher that drains it, and the
/// dead-token webhook, built from the `storage`, `dispatcher` and `webhook` sections.
struct DurableAssembly {
    let settings: DurableSettings
    let storage: SQLiteCampaignStorage
    let dispatcher: Dispatcher
    let webhook: FeedbackWebhook?
    let retention: Retention
    let campaigns: DurableCampaigns

    /// Opens (creating its folder and file if needed) and migrates the database. `serve`
    /// opens it as the owner (a second owner is refused, naming the first); `send` and
    /// `jwt` share it only for the provider token.
    static func openStorage(_ settings: DurableSettings.Storage,
                            access: SQLiteCampaignStorage.Access = .shared) -> Result<SQLiteCampaignStorage, CLIFailure> {
        makeParentDirectory(of: settings.path)
        do throws(StorageError) {
            return .success(try SQLiteCampaignStorage(
                path: settings.path,
                options: .init(synchronousFull: settings.synchronousFull, busyTimeoutMilliseconds: Int32(settings.busyTimeoutMilliseconds),
                               access: access)))
        } catch {
            return .failure(storageFailure(error, path: settings.path))
        }
    }

    /// `storage in use by pid N on HOST since T (database PATH)` for a second owner; the
    /// code and SQLite's message otherwise. Exit 2 either way.
    static func storageFailure(_ error: StorageError, path: String) -> CLIFailure {
        let shown = TextSafety.escapedForDisplay(path)
        if error.code == .inUse { return .configuration("\(error.message) (database \(shown))") }
        return .configuration("storage \(shown): \(error.description)")
    }

    static func assemble(_ settings: DurableSettings, storage: SQLiteCampaignStorage, fleet: APNsFleet,
                         instance: InstanceID, defaultInFlight: Int, metrics: Metrics,
                         log: @escaping @Sendable (String) -> Void) -> DurableAssembly {
        let webhook = settings.webhook.map { FeedbackWebhook(settings: $0, storage: storage, log: log) }
        let d = settings.dispatcher
        let dispatcher = Dispatcher(
            storage: storage, sender: fleet.sender(app: "", environment: "", dryRun: false),
            dryRunSender: fleet.sender(app: "", environment: "", dryRun: true), metrics: metrics,
            // A campaign's app and environment wait while their key is held (until its
            // pause ends or its next probe is due) or their pool cannot reach APNs (looked
            // at again every second: the transport probes on its own); other apps go on.
            heldUntil: { route in
                fleet.heldUntil(app: route.app, environment: route.environment, dryRun: route.dryRun, now: SystemClock().wallSeconds())
            },
            options: .init(inFlight: d.inFlight ?? defaultInFlight, claimBatch: d.claimBatch, maxAttempts: d.maxAttempts,
                           retryBaseSeconds: d.retryBaseSeconds, retryMaxSeconds: d.retryMaxSeconds,
                           lease: LeaseTerms(instance: instance, seconds: d.leaseSeconds)),
            log: log, onDeadTokens: { webhook?.wake() },
            housekeeping: {
                _ = try? storage.purgeIdempotencyKeys(olderThan: SystemClock().wallSeconds() - settings.storage.idempotencyRetentionSeconds)
            },
            // Each campaign goes out with its app's credentials, in its environment.
            senders: { message in fleet.sender(app: message.app, environment: message.environment, dryRun: message.dryRun) })
        let retention = Retention(storage: storage, options: .init(retentionSeconds: settings.storage.retentionSeconds),
                                  log: log)
        return DurableAssembly(settings: settings, storage: storage, dispatcher: dispatcher, webhook: webhook, retention: retention,
                               campaigns: DurableCampaigns(storage: storage, dispatcher: dispatcher,
                                                           idempotencyRetentionSeconds: settings.storage.idempotencyRetentionSeconds))
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
