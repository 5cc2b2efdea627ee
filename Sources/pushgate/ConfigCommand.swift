import APNs
import StrictJSON

/// `pushgate config check [--config PATH]` and `pushgate config print [--config PATH]`:
/// every problem in the configuration at once (what `serve` would refuse to start with),
/// or the configuration as it takes effect after environment overrides and defaults,
/// secrets redacted.
enum ConfigCommand {
    static let usage = "usage: pushgate config check [--config PATH]\n"
        + "       pushgate config print [--config PATH]"

    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case "check": return check(Array(arguments.dropFirst()))
        case "print": return print(Array(arguments.dropFirst()))
        case "--help", "-h": Output.line(usage); return ExitStatus.ok
        case nil: return usageError("give a subcommand: check or print")
        case let other?: return usageError("unknown subcommand \(quotedForDisplay(other))")
        }
    }

    /// Reads everything `serve` reads: the file, the overrides, the route table, the files
    /// named, the credentials a real send needs and the key itself.
    static func read(_ arguments: [String], command: String) -> (GatewayConfig?, ConfigReader)? {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "config \(command)", arguments, usage: usage, valued: ["config"])
        } catch {
            return nil
        }
        let path = configPath(args[option: "config"])
        var (config, reader) = GatewayConfig.read(path: path, environment: processEnvironment())
        guard let loaded = config, reader.isValid else { return (config, reader) }
        APNsConfiguration.requireCredentials(loaded.apns, reader: &reader)
        if let problem = loaded.server.exposureProblem {
            reader.report(.invalidValue, at: reader.where(JSONPath.root.appending("server").appending("listen")), problem)
        }
        if reader.isValid, loaded.apns.keyFile != nil {
            do { _ = try APNsDelivery.providerTokens(for: loaded.apns) } catch {
                reader.report(error.diagnosticCode, at: reader.where(error.setting), error.message)
            }
        }
        config = loaded
        return (config, reader)
    }

    static func check(_ arguments: [String]) -> Int32 {
        guard let (config, reader) = read(arguments, command: "check") else { return ExitStatus.usage }
        guard let config, reader.isValid else { return report(reader.diagnostics) }
        let mode = config.apns.dryRun ? "dry run" : "sending to \(config.apns.baseURL)"
        Output.line("\(TextSafety.escapedForDisplay(config.source)): ok (\(config.routes.routes.count) routes, APNs \(mode), listen \(config.server.http.host):\(config.server.http.port))")
        return ExitStatus.ok
    }

    static func print(_ arguments: [String]) -> Int32 {
        guard let (config, reader) = read(arguments, command: "print") else { return ExitStatus.usage }
        guard config != nil, reader.isValid else { return report(reader.diagnostics) }
        Output.write(JSONWriter.pretty(reader.effectiveDocument))
        return ExitStatus.ok
    }

    /// Every problem, one `place: message [code]` line each, then the count (exit 2).
    static func report(_ diagnostics: [Diagnostic]) -> Int32 {
        for diagnostic in diagnostics { Output.error(diagnostic.description) }
        Output.error("pushgate config: \(diagnostics.count) \(diagnostics.count == 1 ? "problem" : "problems") in the configuration")
        return ExitStatus.usage
    }

    static func usageError(_ message: String) -> Int32 {
        Output.error("pushgate config: \(message)\n\(usage)")
        return ExitStatus.usage
    }
}
