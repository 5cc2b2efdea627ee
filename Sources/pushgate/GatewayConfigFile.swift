#if canImport(Glibc)
import Glibc
#endif
import APNs
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
/// in the file, in the environment overrides, in the route table and in the files the
/// configuration names is reported together, each with its file and pointer (or its
/// variable). Paths inside the file are relative to the folder the file is in, so the same
/// file works from any working directory.
struct GatewayConfig {
    /// The file it was read from, for messages.
    let source: String
    /// The app's bundle id; when absent, the route table's `app.bundleId`.
    let topic: String?
    let routesPath: String
    let templatesPath: String
    let routes: RouteTable
    let apns: APNsConfiguration
    let server: ServerSettings
    let durable: DurableSettings
    /// `guard.confirmAbove`: campaigns to more devices must confirm their count.
    let sendGuard: SendGuard
    /// What was read and from where (for `config print` and for blaming later problems
    /// on the file or the variable that set the value).
    let reader: ConfigReader

    static let knownKeys = ["topic", "routes", "templates", "apns", "server", "storage", "dispatcher", "webhook", "guard"]
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
        var reader = ConfigReader(file: path, environment: environment)
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
        let topic = reader.string(object, "topic", at: .root, validate: BundleID.problem(with:))?.value
        let routes = reader.path(object, "routes", at: .root, default: "routes.json")
        let templates = reader.path(object, "templates", at: .root, default: "../Templates")
        var apns = APNsConfiguration.read(object["apns"], reader: &reader)
        let server = ServerSettings(object["server"], reader: &reader)
        let durable = DurableSettings(storage: object["storage"], dispatcher: object["dispatcher"], webhook: object["webhook"],
                                      defaultPath: defaultStoragePath, reader: &reader)
        let guardPath = JSONPath.root.appending("guard")
        let guardSection = reader.section(object["guard"], at: guardPath, keys: ["confirmAbove"])
        let confirmAbove = reader.integer(guardSection, "confirmAbove", at: guardPath, in: 0...1_000_000_000,
                                          default: SendGuard.defaultConfirmAbove) ?? SendGuard.defaultConfirmAbove
        reader.reportUnreadVariables(namespaces: ["apns", "server", "storage", "dispatcher", "webhook", "guard"].map { JSONPath.root.appending($0) })
        if let templates, !isDirectory(templates.value) {
            reader.report(.fileNotFound, at: templates.location, missingFile(templates, what: "templates folder", reader: reader))
        }
        for key in ["keyFile", "caFile"] {
            let setting = JSONPath.root.appending("apns").appending(key)
            if let entry = reader.entries.last(where: { $0.path == setting }), let file = entry.value.stringValue, access(file, R_OK) != 0 {
                let missing = errno == ENOENT
                let found = ConfigReader.Setting(value: file, location: reader.where(setting), origin: entry.origin,
                                                 written: entry.origin == .file ? nil : file)
                reader.report(missing ? .fileNotFound : .fileUnreadable, at: found.location, missingFile(found, what: key, reader: reader))
                if key == "keyFile" { apns.keyFile = nil }
            }
        }
        var table: RouteTable?
        if let routes {
            switch readFile(routes.value, limit: 4 << 20, at: routes.location) {
            case .failure(let problem):
                reader.append([problem.code == .fileNotFound
                    ? Diagnostic(.fileNotFound, at: routes.location, missingFile(routes, what: "route table", reader: reader)) : problem])
            case .success(let bytes):
                do throws(RouteTableError) {
                    table = try RouteTable(jsonBytes: bytes, source: routes.value)
                } catch {
                    reader.append(error.diagnostics)
                }
            }
        }
        guard let table, let routes, let templates else { return (nil, reader) }
        return (GatewayConfig(source: path, topic: topic, routesPath: routes.value, templatesPath: templates.value, routes: table,
                              apns: apns, server: server, durable: durable, sendGuard: SendGuard(confirmAbove: confirmAbove),
                              reader: reader), reader)
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
    /// The configuration and the route table it names: what preview, send and serve all start from.
    static func loadWithRoutes(path: String) -> Result<(GatewayConfig, RouteTable), CLIFailure> {
        load(path: path).map { ($0, $0.routes) }
    }

    /// The campaign planner for this configuration: its topic (or the app's bundle id),
    /// the route table, and its templates folder.
    func planner(routes table: RouteTable, requireDevices: Bool = true) -> CampaignPlanner {
        CampaignPlanner(bundleId: topic ?? table.app.bundleId, links: table,
                        templates: TemplateFolder(path: templatesPath), requireDevices: requireDevices)
    }
}
