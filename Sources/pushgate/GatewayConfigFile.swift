#if canImport(Glibc)
import Glibc
#endif
import APNs
import Outbox
import DeepLinks
import Gateway
import Payloads
import StrictJSON

/// Where commands look for the gateway configuration when neither `--config` nor
/// `PUSHGATE_CONFIG` says.
let defaultConfigPath = "config/gateway.json"

/// The configuration file to read: `--config`, else `PUSHGATE_CONFIG`, else the default.
func configPath(_ option: String?, environment: [String: String] = processEnvironment()) -> String {
    option ?? environment["PUSHGATE_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultConfigPath
}

/// `config/gateway.json`, every section read at once by one `ConfigReader`: each problem
/// in the file, in the environment overrides, in the route tables and in the files the
/// configuration names is reported together, each with its file and pointer (or its
/// variable). Paths inside the file are relative to the folder the file is in, so the same
/// file works from any working directory.
///
/// The configuration names one app (the top-level `topic`, `routes`, `templates` and
/// `apns`), or several under `apps`, each inheriting whatever it does not set from the top
/// level.
struct GatewayConfig {
    /// The file it was read from, for messages.
    let source: String
    /// At least one, in file order.
    let apps: [AppConfig]
    /// The `apns` section as written at the top level: the settings every app shares
    /// (connections, timeouts, retries, url, dry run) and the defaults of the rest.
    let apns: APNsConfiguration
    let server: ServerSettings
    let durable: DurableSettings
    /// `guard.confirmAbove`: campaigns to more devices must confirm their count.
    let sendGuard: SendGuard
    /// What was read and from where (for `config print` and for blaming later problems
    /// on the file or the variable that set the value).
    let reader: ConfigReader

    static let knownKeys = ["topic", "routes", "templates", "apns", "apps", "server", "storage", "dispatcher", "lanes", "webhook", "guard"]
    /// Where the database goes when the configuration does not say: beside the repo's `config/`.
    static let defaultStoragePath = "../var/pushgate.db"

    /// Reads and checks the file and everything it names; every problem is listed.
    static func load(path: String, environment: [String: String] = processEnvironment()) -> Result<GatewayConfig, CLIFailure> {
        let (config, reader) = read(path: path, environment: environment)
        guard let config, reader.isValid else { return .failure(.diagnostics(reader.diagnostics)) }
        return .success(config)
    }

    /// The configuration (nil when the file itself cannot be read as JSON) and every
    /// problem found.
    static func read(path: String, environment: [String: String]) -> (GatewayConfig?, ConfigReader) {
        var reader = ConfigReader(file: path, environment: environment, readFile: readSecretFile)
        let json: JSON
        switch readFile(path, limit: 1 << 20, at: .file(path, at: .root)) {
        case .failure(let problem):
            reader.append([problem])
            return (nil, reader)
        case .success(let bytes):
            do { json = try JSONParser().parse(bytes) } catch {
                reader.append([error.diagnostic(in: path)])
                return (nil, reader)
            }
        }
        if json.objectValue == nil {
            reader.report(.wrongType, at: JSONPath.root, "expected a JSON object, found \(json.kindDescription)")
            return (nil, reader)
        }
        let object = reader.section(json, at: .root, keys: knownKeys)
        let appsJSON = reader.appsSection(object)
        // Written once for every app; with no `apps`, the one app.
        let common = AppSettings.read(object, at: .root, reader: &reader, defaults: true)
        let apns = APNsConfiguration.read(object["apns"], reader: &reader)
        let server = ServerSettings(object["server"], reader: &reader)
        let durable = DurableSettings(storage: object["storage"], dispatcher: object["dispatcher"], lanes: object["lanes"], webhook: object["webhook"],
                                      defaultPath: defaultStoragePath, reader: &reader)
        let guardPath = JSONPath.root.appending("guard")
        let guardSection = reader.section(object["guard"], at: guardPath, keys: ["confirmAbove"])
        let confirmAbove = reader.integer(guardSection, "confirmAbove", at: guardPath, in: 0...1_000_000_000,
                                          default: SendGuard.defaultConfirmAbove) ?? SendGuard.defaultConfirmAbove

        var declared: [(name: String, settings: AppSettings, apns: APNsConfiguration, path: JSONPath)] = []
        if let appsJSON {
            for member in appsJSON.members {
                let path = JSONPath.root.appending("apps").appending(member.key)
                if let problem = AppConfig.nameProblem(member.key) {
                    reader.report(.invalidValue, at: path, problem)
                    continue
                }
                let appObject = reader.section(member.value, at: path, keys: AppSettings.keys)
                guard member.value.objectValue != nil else { continue }
                let own = AppSettings.read(appObject, at: path, reader: &reader, defaults: false)
                let appAPNs = APNsConfiguration.read(app: appObject["apns"], inheriting: apns, reader: &reader, at: path.appending("apns"))
                declared.append((member.key, own.inheriting(common), appAPNs, path))
            }
        } else {
            declared.append((AppConfig.defaultName, common, apns, .root))
        }
        reader.reportUnreadVariables(namespaces: ["apns", "server", "storage", "dispatcher", "lanes", "webhook", "guard", "apps"].map { JSONPath.root.appending($0) })

        var apps: [AppConfig] = []
        var tables: [String: RouteTable?] = [:]
        var checkedFolders: Set<String> = []
        for app in declared {
            if let templates = app.settings.templates, !checkedFolders.contains(templates.value) {
                checkedFolders.insert(templates.value)
                if !isDirectory(templates.value) {
                    reader.report(.fileNotFound, at: templates.location, missingFile(templates, what: "templates folder", reader: reader))
                }
            }
            var appAPNs = app.apns
            let apnsPath = app.path.appending("apns")
            for key in ["keyFile", "caFile"] {
                // The setting that gave the file: the app's own, else the top level's.
                let setting = [apnsPath.appending(key), JSONPath.root.appending("apns").appending(key)]
                    .first { p in reader.entries.contains { $0.path == p } }
                guard let setting, let entry = reader.entries.last(where: { $0.path == setting }), let file = entry.value.stringValue,
                      access(file, R_OK) != 0 else { continue }
                let missing = errno == ENOENT
                if key == "keyFile" { appAPNs.keyFile = nil }
                let location = reader.where(setting)
                guard !reader.diagnostics.contains(where: { $0.location == location }) else { continue }
                let found = ConfigReader.Setting(value: file, location: location, origin: entry.origin,
                                                 written: entry.origin == .file ? nil : file)
                reader.report(missing ? .fileNotFound : .fileUnreadable, at: found.location, missingFile(found, what: key, reader: reader))
            }
            guard let routes = app.settings.routes else { continue }
            if tables[routes.value] == nil {
                tables[routes.value] = loadTable(routes, reader: &reader)
            }
            guard let table = tables[routes.value] ?? nil else { continue }
            apps.append(AppConfig(name: app.name, topic: app.settings.topic?.value, routesPath: routes.value,
                                  templatesPath: app.settings.templates?.value, routes: table, apns: appAPNs, path: app.path))
        }
        if reader.isValid { AppConfig.reportConflicts(apps, reader: &reader) }
        // A key may list only apps that exist.
        let keysPath = JSONPath.root.appending("server").appending("apiKeys")
        for (i, key) in server.apiKeys.enumerated() {
            for name in key.apps ?? [] where !apps.contains(where: { $0.name == name }) && apps.count == declared.count {
                let place = reader.entries.contains { $0.path == keysPath && $0.origin != .file } ? reader.where(keysPath)
                    : reader.location(keysPath.appending(index: i).appending("apps"))
                reader.report(.unknownApp, at: place, "key \(TextSafety.quoted(key.name)) lists app \(TextSafety.quoted(name)), which is not configured; the apps are \(ConfigReader.list(apps.map(\.name)))")
            }
        }
        guard apps.count == declared.count, !apps.isEmpty else { return (nil, reader) }
        return (GatewayConfig(source: path, apps: apps, apns: apns, server: server, durable: durable,
                              sendGuard: SendGuard(confirmAbove: confirmAbove), reader: reader), reader)
    }

    /// A secret's file (`PUSHGATE_…_FILE`): at most 1 MiB, like the configuration.
    static let readSecretFile: ConfigReader.FileReader = { path, location in
        readFile(path, limit: 1 << 20, at: location, expected: "a file holding the secret")
    }

    /// The route table a `routes` setting names, or nil with its problems reported.
    static func loadTable(_ routes: ConfigReader.Setting<String>, reader: inout ConfigReader) -> RouteTable? {
        switch readFile(routes.value, limit: 4 << 20, at: routes.location) {
        case .failure(let problem):
            reader.append([problem.code == .fileNotFound
                ? Diagnostic(.fileNotFound, at: routes.location, missingFile(routes, what: "route table", reader: reader)) : problem])
            return nil
        case .success(let bytes):
            do throws(RouteTableError) {
                return try RouteTable(jsonBytes: bytes, source: routes.value)
            } catch {
                reader.append(error.diagnostics)
                return nil
            }
        }
    }

    /// `the route table "routes.json" (config/routes.json: relative paths are relative to the
    /// folder of config/gateway.json) does not exist or cannot be read`
    static func missingFile(_ setting: ConfigReader.Setting<String>, what: String, reader: ConfigReader) -> String {
        let written = setting.written ?? setting.value
        var text = "the \(what) \(TextSafety.quoted(written))"
        if !written.hasPrefix("/") {
            switch setting.origin {
            case .environment:
                text += " (relative to the working directory)"
            case .file, .defaultValue:
                text += " (\(TextSafety.escapedForDisplay(setting.value)): relative paths are relative to the folder of \(TextSafety.escapedForDisplay(reader.file)))"
            }
        }
        return text + " does not exist or cannot be read"
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func resolve(_ path: String, in folder: String) -> String {
        ConfigReader.resolve(path, in: folder)
    }
}

extension ConfigReader {
    /// Where the effective value of the setting at `path` came from: the variable that set
    /// it, or its place in the file.
    func `where`(_ path: JSONPath) -> DiagnosticLocation {
        if let entry = entries.last(where: { $0.path == path }), case .environment(let name) = entry.origin {
            return .environment(name)
        }
        return location(path)
    }
}

extension GatewayConfig {
    /// The configuration and the app a command works on.
    static func load(path: String, app name: String?) -> Result<(GatewayConfig, AppConfig), CLIFailure> {
        load(path: path).flatMap { config in config.app(named: name).map { (config, $0) } }
    }
}
