import Gateway

/// `pushgate apps [--config PATH] [--json]`: the configured apps with their bundle ids,
/// hosts, teams, key ids and environments (what `GET /v1/apps` shows an admin key).
enum AppsCommand {
    static let usage = "usage: pushgate apps [--config PATH] [--json]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "apps", arguments, usage: usage, valued: ["config"], flags: ["json"])
        } catch {
            return error.status
        }
        switch GatewayConfig.load(path: configPath(args[option: "config"])) {
        case .failure(let failure):
            Output.error("pushgate apps: \(failure.message)")
            return failure.status
        case .success(let config):
            let apps = config.apps.map(\.gatewayApp)
            if args.has("json") {
                Output.writeBytes(GatewayApp.list(apps))
            } else {
                Output.write(table(apps))
            }
            return ExitStatus.ok
        }
    }

    static func table(_ apps: [GatewayApp]) -> String {
        let header = ["NAME", "BUNDLE ID", "HOSTS", "SCHEME", "TEAM", "KEY ID", "ENVIRONMENTS"]
        var rows = [header]
        for app in apps {
            rows.append([app.name, app.bundleId, app.routes.hosts.joined(separator: ","), app.routes.app.scheme ?? "-",
                         app.teamId ?? "-", app.keyId ?? "-", app.environments.map(\.rawValue).joined(separator: ",")])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padding(to: widths[i] + 2) }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
