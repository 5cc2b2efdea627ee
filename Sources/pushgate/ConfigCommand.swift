#if canImport(Glibc)
import Glibc
#endif
import APNs
import OptionTable
import Payloads
import StrictJSON

/// `pushgate config check [--config PATH]` and `pushgate config print [--config PATH]`:
/// every problem in the configuration at once (what `serve` would refuse to start with),
/// or the configuration as it takes effect after environment overrides and defaults,
/// secrets redacted.
enum ConfigCommand {
    static let command = Command.group("config", "check the configuration, or print it as it takes effect", [
        Command(CommandDeclaration(
            path: ["config", "check"], summary: "report every problem in the configuration at once (what serve would refuse)",
            options: [ConfigOption.option],
            notes: ["Exit status: 0 valid, 2 any problem (one place: message [code] line each on stderr)."]),
            run: check),
        Command(CommandDeclaration(
            path: ["config", "print"], summary: "print the configuration as it takes effect (overrides and defaults applied, secrets redacted)",
            options: [ConfigOption.option]),
            run: print),
    ])

    /// Reads everything `serve` reads: the file, the overrides, the route table, the files
    /// named, the credentials a real send needs and the key itself.
    static func read(_ args: Invocation) -> (GatewayConfig?, ConfigReader) {
        let path = configPath(args["config"])
        var (config, reader) = GatewayConfig.read(path: path, environment: processEnvironment())
        guard let loaded = config, reader.isValid else { return (config, reader) }
        for app in loaded.apps {
            APNsConfiguration.requireCredentials(app.apns, reader: &reader, at: app.path.appending("apns"))
        }
        if let problem = loaded.server.exposureProblem {
            reader.report(.invalidValue, at: reader.where(JSONPath.root.appending("server").appending("listen")), problem)
        }
        var folders: [String] = []
        for app in loaded.apps { if let folder = app.templatesPath, !folders.contains(folder) { folders.append(folder) } }
        for folder in folders { reader.append(templateProblems(in: folder)) }
        if reader.isValid {
            for app in loaded.apps where app.apns.keyFile != nil {
                do { _ = try APNsDelivery.providerTokens(for: app.apns, clock: processClock) } catch {
                    let location = reader.where(app.setting(error.setting, in: reader))
                    if !reader.diagnostics.contains(where: { $0.location == location }) {
                        reader.report(error.diagnosticCode, at: location, error.message)
                    }
                }
            }
        }
        config = loaded
        return (config, reader)
    }

    /// Every template in the folder read as `preview` would read it, each problem at its
    /// file and pointer (commands read templates only when a campaign names one).
    static func templateProblems(in folder: String) -> [Diagnostic] {
        guard let dir = opendir(folder) else { return [] }  // a missing folder is reported already
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".json") { names.append(String(name.dropLast(5))) }
        }
        closedir(dir)
        var problems: [Diagnostic] = []
        for name in names.sorted() {
            let file = GatewayConfig.resolve(name + ".json", in: folder)
            switch readSmallFile(path: file, limit: 1 << 20) {
            case .failure(let failure):
                problems.append(Diagnostic(.fileUnreadable, at: .file(file, at: .root), failure.message))
            case .success(let bytes):
                if case .failure(let rejection) = Template.parse(jsonBytes: bytes, name: name) {
                    problems += rejection.problems.map { Diagnostic($0.diagnostic.code, at: .file(file, at: $0.path), $0.message) }
                }
            }
        }
        return problems
    }

    static func check(_ args: Invocation) -> Int32 {
        let (config, reader) = read(args)
        guard let config, reader.isValid else { return report(reader.diagnostics) }
        let mode = config.apns.dryRun ? "dry run" : "sending to \(config.apns.baseURL)"
        func contents(_ app: AppConfig) -> String {
            "\(app.routes.routes.count) routes" + (app.templatesPath == nil ? ", no templates" : "")
        }
        let apps = config.apps.count == 1 ? contents(config.apps[0])
            : "\(config.apps.count) apps: " + config.apps.map { "\($0.name) \(contents($0))" }.joined(separator: ", ")
        Output.line("\(TextSafety.escapedForDisplay(config.source)): ok (\(apps), APNs \(mode), listen \(config.server.http.host):\(config.server.http.port))")
        return ExitStatus.ok
    }

    static func print(_ args: Invocation) -> Int32 {
        let (config, reader) = read(args)
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
}
