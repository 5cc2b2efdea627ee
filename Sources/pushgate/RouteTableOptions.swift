#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import StrictJSON

/// `--config PATH | --routes PATH` for the commands that need only the route table: the
/// table a gateway configuration names, or a routes file (default `config/routes.json`).
enum RouteTableOptions {
    static let valued: Set<String> = ["config", "routes", "app"]

    static func load(_ args: Arguments) -> Result<RouteTable, CLIFailure> {
        if args[option: "app"] != nil {
            // One configuration has one route table today; there is nothing to select.
            return .failure(.configuration("--app: the configuration has a single route table (no \"apps\"), so there is no app to choose; leave --app out"))
        }
        switch (args[option: "config"], args[option: "routes"]) {
        case (let config?, nil): return GatewayConfig.loadWithRoutes(path: config).map(\.1)
        case (nil, let routes): return loadRouteTable(path: routes ?? defaultRoutesPath)
        case (_?, _?): return .failure(.configuration("give --config or --routes, not both"))
        }
    }

    /// How the options picked the table, for a generated file's header.
    static func shown(_ args: Arguments) -> String {
        if let config = args[option: "config"] { return "--config \(config)" }
        return "--routes \(args[option: "routes"] ?? defaultRoutesPath)"
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
