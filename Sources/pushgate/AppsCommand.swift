import Gateway
import OptionTable

/// `pushgate apps [--config PATH] [--json]`: the configured apps with their bundle ids,
/// hosts, teams, key ids and environments (what `GET /v1/apps` shows an admin key).
enum AppsCommand {
    static let command = Command(
        CommandDeclaration(path: ["apps"], summary: "list the configured apps: bundle ids, hosts, teams, key ids",
                           options: [ConfigOption.option, .flag("json", "print the list as JSON (what GET /v1/apps shows an admin key)")]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        switch GatewayConfig.load(path: configPath(args["config"])) {
        case .failure(let failure):
            return args.fail(failure)
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
