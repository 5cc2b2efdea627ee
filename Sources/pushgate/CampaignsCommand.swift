#if canImport(Glibc)
import Glibc
#endif
import Gateway
import Storage
import StrictJSON

/// `pushgate campaigns [--config PATH] [--json] [--limit N]`: the campaigns in the
/// configured database, newest first, with their counts by state.
enum CampaignsCommand {
    static let usage = "usage: pushgate campaigns [--config PATH] [--json] [--limit N]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "campaigns", arguments, usage: usage, valued: ["config", "limit"], flags: ["json"])
        } catch {
            return error.status
        }
        var limit = 50
        if let text = args[option: "limit"] {
            guard let n = Int(text), (1...10_000).contains(n) else {
                Output.error("pushgate campaigns: --limit must be a whole number from 1 to 10000, got \(TextSafety.quoted(text))")
                return ExitStatus.usage
            }
            limit = n
        }
        let settings: DurableSettings
        switch GatewayConfig.load(path: configPath(args[option: "config"])).map(\.durable) {
        case .failure(let failure):
            Output.error("pushgate campaigns: \(failure.message)")
            return failure.status
        case .success(let value): settings = value
        }
        var summaries: [CampaignSummary] = []
        // No database yet means no campaigns yet; do not create one just to list nothing.
        // Read-only: works next to a running server, and never migrates.
        if access(settings.storage.path, F_OK) == 0 {
            do throws(StorageError) {
                let storage = try SQLiteCampaignStorage(path: settings.storage.path, options: .init(access: .readOnly))
                summaries = try storage.campaigns(limit: limit, before: nil)
            } catch {
                Output.error("pushgate campaigns: \(DurableAssembly.storageFailure(error, path: settings.storage.path).message)")
                return ExitStatus.usage
            }
        }
        if args.has("json") {
            Output.writeBytes(CampaignJSON.list(summaries, limit: limit))
        } else {
            Output.write(table(summaries))
        }
        return ExitStatus.ok
    }

    static func table(_ summaries: [CampaignSummary]) -> String {
        guard !summaries.isEmpty else { return "no campaigns\n" }
        let header = ["ID", "APP", "STATUS", "CREATED", "DEVICES", "QUEUED", "DELIVERED", "FAILED", "UNREG", "SKIPPED", "DRY-RUN"]
        var rows = [header]
        for s in summaries {
            let queued = (s.counts[.pending] ?? 0) + (s.counts[.inFlight] ?? 0) + (s.counts[.retrying] ?? 0)
            rows.append([s.id, s.app.isEmpty ? "-" : s.app, s.status, CampaignJSON.timestamp(s.createdAt), String(s.devices), String(queued),
                         String(s.counts[.delivered] ?? 0), String(s.counts[.failed] ?? 0), String(s.counts[.unregistered] ?? 0),
                         String(s.counts[.skipped] ?? 0), String(s.counts[.dryRun] ?? 0)])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padding(to: widths[i] + 2) }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
