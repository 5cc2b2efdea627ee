#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import OptionTable
import StrictJSON

/// `--config PATH` for every command that reads the gateway configuration, and `--app`
/// for those that act for one of its apps.
enum ConfigOption {
    static let option = Option.value("config", "PATH", "the gateway configuration (default: $PUSHGATE_CONFIG, else config/gateway.json)")
    static let app = Option.value("app", "NAME", "the configuration's app to act for (needed when it lists several)")
}

/// `--config PATH | --routes PATH` for the commands that need only the route table: the
/// table a gateway configuration names, or a routes file (default `config/routes.json`).
enum RouteTableOptions {
    static let options: [Option] = [
        .value("config", "PATH", "use the route table this gateway configuration names"),
        .value("routes", "PATH", "use this route table file (default: config/routes.json when --config is not given)"),
        .value("app", "NAME", "the app of the configuration whose route table to use (needed when it lists several)"),
    ]

    static func load(_ args: Invocation) -> Result<RouteTable, CLIFailure> {
        switch (args["config"], args["routes"], args["app"]) {
        case (_?, _?, _): return .failure(.configuration("give --config or --routes, not both"))
        case (nil, _?, _?): return .failure(.configuration("--app chooses an app of the configuration; it does not apply to a --routes file"))
        case (let config?, nil, let app): return GatewayConfig.load(path: config, app: app).map(\.1.routes)
        // --app alone: the configuration's app, found the usual way (PUSHGATE_CONFIG or the default).
        case (nil, nil, let app?): return GatewayConfig.load(path: configPath(nil), app: app).map(\.1.routes)
        case (nil, let routes, nil): return loadRouteTable(path: routes ?? defaultRoutesPath)
        }
    }

    /// How the options picked the table, for a generated file's header.
    static func shown(_ args: Invocation) -> String {
        let app = args["app"].map { " --app \($0)" } ?? ""
        if let config = args["config"] { return "--config \(config)" + app }
        if !app.isEmpty { return String(app.dropFirst()) }
        return "--routes \(args["routes"] ?? defaultRoutesPath)"
    }
}

/// Writes `text` to `path` (created or replaced, through a temporary file in the same
/// folder, so a reader never sees half a file).
func writeTextFile(path: String, _ text: String) -> Result<Void, CLIFailure> {
    let shown = TextSafety.escapedForDisplay(path)
    let temporary = path + ".tmp-\(getpid())"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    if fd < 0 { return .failure(.configuration("\(shown): cannot create: \(String(cString: strerror(errno)))")) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
        if n < 0 {
            if errno == EINTR { continue }
            let message = String(cString: strerror(errno))
            close(fd)
            unlink(temporary)
            return .failure(.configuration("\(shown): cannot write: \(message)"))
        }
        offset += n
    }
    close(fd)
    if rename(temporary, path) != 0 {
        let message = String(cString: strerror(errno))
        unlink(temporary)
        return .failure(.configuration("\(shown): cannot write: \(message)"))
    }
    return .success(())
}
