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
/// seen with their last heartbeat, the leases held. Reads only; never migrates.
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
        switch read(storage) {
        case .failure(let failure): return args.fail(failure)
        case .success(let found):
            let now = SystemClock().wallSeconds()
            if args.has("json") {
                Output.writeBytes(json(found, location: storage.location))
            } else {
                Output.write(text(found, location: storage.location, now: now))
            }
            return ExitStatus.ok
        }
    }

    /// The status without migrating; nil for an SQLite file not created yet.
    static func read(_ settings: DurableSettings.Storage) -> Result<StorageStatus?, CLIFailure> {
        do throws(StorageError) {
            if settings.url != nil {
                switch DurableAssembly.openPostgres(settings, instance: "cli", readOnly: true, inspectOnly: true) {
                case .failure(let failure): return .failure(failure)
                case .success(let storage): return .success(try storage.status())
                }
            }
            return .success(try SQLiteCampaignStorage.status(path: settings.path))
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
            out += "  \(lease.owner)  \(lease.deliveries) deliveries, expiring \(RFC3339.format(lease.firstExpiry)) to \(RFC3339.format(lease.lastExpiry))\n"
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
                        w.member("first_expiry", RFC3339.format(lease.firstExpiry))
                        w.member("last_expiry", RFC3339.format(lease.lastExpiry))
                    }
                }
            })
        }
        return w.bytes + [0x0A]
    }
}
