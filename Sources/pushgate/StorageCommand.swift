#if canImport(Glibc)
import Glibc
#endif
import Gateway
import Outbox
import OptionTable
import PostgresStorage
import Storage
import StrictJSON
import Timing

/// `pushgate storage migrate [--config PATH]`: brings the configured database to this
/// pushgate's schema (on PostgreSQL under the advisory lock every instance takes).
/// `pushgate storage status [--config PATH] [--json]`: its schema version, the instances
/// seen with their last heartbeat, the leases held and what becomes of them, and how the
/// space of purged rows comes back. Reads only; never migrates.
enum StorageCommand {
    static let command = Command.group("storage", "migrate the campaign database or show its state", [
        Command(CommandDeclaration(
            path: ["storage", "migrate"], summary: "bring the configured database to this pushgate's schema",
            forms: ["[--config PATH]"],
            options: [ConfigOption.option],
            notes: ["Exit status: 0 migrated (or already current), 2 configuration or storage errors (a newer schema is refused)."]),
            run: migrate),
        Command(CommandDeclaration(
            path: ["storage", "status"], summary: "show the schema version, the instances seen with their last heartbeat, and the leases held",
            forms: ["[--json] [--config PATH]"],
            options: [ConfigOption.option, .flag("json", "print the status as JSON")],
            notes: ["Exit status: 0 shown, 2 configuration or storage errors."]),
            run: status),
    ])

    static func settings(_ args: Invocation) -> Result<DurableSettings.Storage, CLIFailure> {
        GatewayConfig.load(path: configPath(args["config"])).map(\.durable.storage)
    }

    static func migrate(_ args: Invocation) -> Int32 {
        let storage: DurableSettings.Storage
        switch settings(args) {
        case .failure(let failure): return args.fail(failure)
        case .success(let value): storage = value
        }
        // Opening migrates (SQLite refuses while a serve owns the file and a migration is due).
        switch DurableAssembly.openStorage(storage) {
        case .failure(let failure): return args.fail(failure)
        case .success: break
        }
        switch read(storage) {
        case .failure(let failure): return args.fail(failure)
        case .success(let found):
            Output.line("storage \(TextSafety.escapedForDisplay(storage.location)): schema version \(found?.schemaVersion ?? 0) (\(found?.backend ?? "sqlite"))")
            return ExitStatus.ok
        }
    }

    static func status(_ args: Invocation) -> Int32 {
        let storage: DurableSettings.Storage
        switch settings(args) {
        case .failure(let failure): return args.fail(failure)
        case .success(let value): storage = value
        }
        let now = processClock.wallSeconds()
        switch read(storage, now: now) {
        case .failure(let failure): return args.fail(failure)
        case .success(let found):
            if args.has("json") {
                Output.writeBytes(json(found, location: storage.location))
            } else {
                Output.write(text(found, location: storage.location, now: now))
            }
            return ExitStatus.ok
        }
    }

    /// The status without migrating; nil for an SQLite file not created yet.
    static func read(_ settings: DurableSettings.Storage, now: Double = processClock.wallSeconds()) -> Result<StorageStatus?, CLIFailure> {
        do throws(StorageError) {
            if settings.url != nil {
                switch DurableAssembly.openPostgres(settings, instance: "cli", readOnly: true, inspectOnly: true) {
                case .failure(let failure): return .failure(failure)
                case .success(let storage): return .success(try storage.status(now: now))
                }
            }
            return .success(try SQLiteCampaignStorage.status(path: settings.path, now: now))
        } catch {
            return .failure(DurableAssembly.storageFailure(error, settings))
        }
    }

    static func text(_ status: StorageStatus?, location: String, now: Double) -> String {
        var out = "storage: \(TextSafety.escapedForDisplay(location))\n"
        guard let status else { return out + "no database yet (serve or storage migrate creates it)\n" }
        out += "backend: \(status.backend)\n"
        out += "schema version: \(status.schemaVersion) (this pushgate: \(status.currentVersion))"
        if status.schemaVersion < status.currentVersion { out += "; run pushgate storage migrate" }
        if status.schemaVersion > status.currentVersion { out += "; written by a newer pushgate" }
        out += "\n"
        if let depth = status.queueDepth { out += "queued deliveries: \(depth)\n" }
        out += "instances:\(status.instances.isEmpty ? " none seen" : "")\n"
        for instance in status.instances {
            let beat = instance.heartbeatAt.map { "last heartbeat \(RFC3339.format($0)) (\(Int((now - $0).rounded())) s ago)" } ?? "no heartbeat yet"
            out += "  \(instance.owner)  \(beat)\n"
        }
        out += "leases:\(status.leases.isEmpty ? " none held" : "")\n"
        for lease in status.leases {
            out += "  \(lease.owner)  \(lease.deliveries) deliveries (\(lease.expired) expired), "
                + "expiring \(RFC3339.format(lease.firstExpiry)) to \(RFC3339.format(lease.lastExpiry))\n"
        }
        switch status.recovery {
        case .givenBackAtStart:
            out += "in flight when serve stops or dies: given back when serve starts again on this file\n"
        case .takenOverWhenExpired:
            out += "in flight when an instance stops or dies: taken over by the next claim of any instance once the lease expires (dispatcher.leaseSeconds)\n"
        }
        switch status.space {
        case .freePages(let pages, let free, let pageSize)?:
            out += "space: \(pages * pageSize / 1_048_576) MB, \(free) of \(pages) pages free; retention gives free pages back (incremental vacuum)\n"
        case .autovacuum(let bytes, let deadRows, let lastVacuum)?:
            let last = lastVacuum.map { "last vacuumed \(RFC3339.format($0))" } ?? "not vacuumed yet"
            out += "space: \(bytes / 1_048_576) MB; PostgreSQL's autovacuum makes purged rows' space reusable "
                + "(deliveries: \(deadRows) dead rows, \(last))\n"
        case nil: break
        }
        return out
    }

    static func json(_ status: StorageStatus?, location: String) -> [UInt8] {
        var w = JSONWriter()
        w.object { w in
            w.member("location", location)
            guard let status else {
                w.member("exists", false)
                return
            }
            w.member("exists", true)
            w.member("backend", status.backend)
            w.member("schema_version", status.schemaVersion)
            w.member("current_version", status.currentVersion)
            w.member("queue_depth", orNull: status.queueDepth)
            w.member("instances", array: { w in
                for instance in status.instances {
                    w.object { w in
                        w.member("owner", instance.owner)
                        w.member("started_at", orNull: instance.startedAt.map(RFC3339.format))
                        w.member("heartbeat_at", orNull: instance.heartbeatAt.map(RFC3339.format))
                    }
                }
            })
            w.member("leases", array: { w in
                for lease in status.leases {
                    w.object { w in
                        w.member("owner", lease.owner)
                        w.member("deliveries", lease.deliveries)
                        w.member("expired", lease.expired)
                        w.member("first_expiry", RFC3339.format(lease.firstExpiry))
                        w.member("last_expiry", RFC3339.format(lease.lastExpiry))
                    }
                }
            })
            w.member("in_flight_recovery", status.recovery.rawValue)
            switch status.space {
            case .freePages(let pages, let free, let pageSize)?:
                w.member("space", object: { w in
                    w.member("reclaim", "incremental_vacuum")
                    w.member("bytes", pages * pageSize)
                    w.member("pages", pages)
                    w.member("free_pages", free)
                })
            case .autovacuum(let bytes, let deadRows, let lastVacuum)?:
                w.member("space", object: { w in
                    w.member("reclaim", "autovacuum")
                    w.member("bytes", bytes)
                    w.member("dead_rows", deadRows)
                    w.member("last_vacuum", orNull: lastVacuum.map(RFC3339.format))
                })
            case nil: w.member("space", orNull: Optional<String>.none)
            }
        }
        return w.bytes + [0x0A]
    }
}
