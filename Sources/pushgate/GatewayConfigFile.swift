import DeepLinks
import Payloads
import StrictJSON

/// Where commands look for the gateway configuration when `--config` is not given.
let defaultConfigPath = "config/gateway.json"

/// `config/gateway.json`. Paths inside it are relative to the folder the file is in, so
/// the same file works from any working directory.
///
/// ```json
/// {"topic": "com.example.shop", "routes": "routes.json", "templates": "../Templates", "apns": {…}}
/// ```
struct GatewayConfig {
    /// The file it was read from, for messages.
    let source: String
    /// The app's bundle id; when absent, the route table's `app.bundleId`.
    let topic: String?
    /// Resolved path of the route table.
    let routesPath: String
    /// Resolved path of the templates folder.
    let templatesPath: String
    /// The delivery settings, owned and read by the APNs layer; kept as it is here.
    let apns: JSONObject?
    /// The HTTP service's settings, read by `Gateway.ServerSettings`; kept as it is here.
    let server: JSON?
    /// Durable campaigns: the database, the dispatcher, the dead-token webhook; read by
    /// `Gateway.DurableSettings`. Paths in them resolve like the others.
    let storage: JSON?
    let dispatcher: JSON?
    let webhook: JSON?

    static let knownKeys = ["topic", "routes", "templates", "apns", "server", "storage", "dispatcher", "webhook"]
    /// Where the database goes when the configuration does not say: beside the repo's `config/`.
    static let defaultStoragePath = "../var/pushgate.db"

    /// Reads and checks the file; every problem is listed in one message.
    static func load(path: String) -> Result<GatewayConfig, CLIFailure> {
        readSmallFile(path: path, limit: 1 << 20).flatMap { parse(jsonBytes: $0, path: path) }
    }

    static func parse(jsonBytes: [UInt8], path: String) -> Result<GatewayConfig, CLIFailure> {
        let shown = TextSafety.escapedForDisplay(path)
        let json: JSON
        do { json = try JSONParser().parse(jsonBytes) } catch {
            return .failure(.configuration("\(shown): \(error.description)"))
        }
        guard case .object(let object) = json else {
            return .failure(.configuration("\(shown): expected a JSON object, found \(json.kindDescription)"))
        }
        var problems: [String] = []
        for member in object.members where !knownKeys.contains(member.key) {
            problems.append("at \(JSONPath.root.appending(member.key)): unknown key; expected one of: \(knownKeys.joined(separator: ", "))")
        }
        func string(_ key: String) -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let s) = value, !s.isEmpty else {
                problems.append("at \(key): expected a non-empty string, found \(value.kindDescription)")
                return nil
            }
            return s
        }
        let topic = string("topic")
        if let t = topic, !isBundleId(t) {
            problems.append("at topic: \(quotedForDisplay(t)) is not a bundle id (letters, digits, '.', '-')")
        }
        let routes = string("routes") ?? "routes.json"
        let templates = string("templates") ?? "../Templates"
        var apns: JSONObject?
        if let value = object["apns"] {
            if case .object(let o) = value { apns = o } else {
                problems.append("at apns: expected an object, found \(value.kindDescription)")
            }
        }
        let server = object["server"]
        guard problems.isEmpty else {
            return .failure(.configuration(problems.map { "\(shown): \($0)" }.joined(separator: "\n")))
        }
        let folder = directory(of: path)
        return .success(GatewayConfig(source: path, topic: topic, routesPath: resolve(routes, in: folder),
                                      templatesPath: resolve(templates, in: folder), apns: apns, server: server,
                                      storage: object["storage"], dispatcher: object["dispatcher"], webhook: object["webhook"]))
    }

    static func isBundleId(_ s: String) -> Bool {
        s.utf8.count <= 255 && s.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2E || b == 0x2D
        }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func resolve(_ path: String, in folder: String) -> String {
        if path.hasPrefix("/") || folder == "." { return path }
        return folder.hasSuffix("/") ? folder + path : folder + "/" + path
    }
}

extension GatewayConfig {
    /// The configuration and the route table it names: what preview, send and serve all start from.
    static func loadWithRoutes(path: String) -> Result<(GatewayConfig, RouteTable), CLIFailure> {
        load(path: path).flatMap { config in loadRouteTable(path: config.routesPath).map { (config, $0) } }
    }

    /// The campaign planner for this configuration: its topic (or the app's bundle id),
    /// the route table, and its templates folder.
    func planner(routes table: RouteTable, requireDevices: Bool = true) -> CampaignPlanner {
        CampaignPlanner(bundleId: topic ?? table.app.bundleId, links: table,
                        templates: TemplateFolder(path: templatesPath), requireDevices: requireDevices)
    }
}
