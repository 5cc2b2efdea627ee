import APNs
import DeepLinks
import Gateway
import Payloads
import StrictJSON

/// One app the gateway sends for: its bundle id (the topic), route table, templates and
/// APNs settings, with whatever the app does not set inherited from the top level.
struct AppConfig {
    /// The name campaigns, API keys and `--app` use.
    let name: String
    /// The bundle id as configured; when absent, the route table's `app.bundleId`.
    let topic: String?
    let routesPath: String
    /// Nil when the configuration names no templates folder and there is none at the
    /// default place: campaigns naming a template get `unknownTemplate`.
    let templatesPath: String?
    let routes: RouteTable
    /// The common `apns` section with the app's own environment and credentials applied.
    let apns: APNsConfiguration
    /// Where the app is in the file: the root for the one app of a configuration without
    /// `apps`, else `/apps/NAME`.
    let path: JSONPath

    /// The name of the one app of a configuration without `apps`.
    static let defaultName = "default"

    /// The bundle id: `apns-topic` before Apple's per-push-type suffix.
    var bundleId: String { topic ?? routes.app.bundleId }

    /// Names become part of environment variables (`AppName`).
    static func nameProblem(_ name: String) -> String? {
        AppName.isValid(name) ? nil : "an app name is \(AppName.rule) (it names environment variables: PUSHGATE_APPS_NAME_…); got \(TextSafety.quoted(name))"
    }

    /// Where a setting an error names (`/apns/keyFile`) was given for this app: its own
    /// `apps.NAME.apns.keyFile` when it set one, else the top level's.
    func setting(_ setting: JSONPath, in reader: ConfigReader) -> JSONPath {
        guard !path.components.isEmpty, setting.components.first == .key("apns") else { return setting }
        var own = path
        for component in setting.components { own.components.append(component) }
        return reader.entries.contains { $0.path == own } ? own : setting
    }

    /// The campaign planner for this app: its topic, its route table, its templates folder.
    func planner(requireDevices: Bool = true) -> CampaignPlanner {
        CampaignPlanner(bundleId: bundleId, links: routes, templates: TemplateFolder(path: templatesPath),
                        requireDevices: requireDevices, clock: processClock)
    }

    /// Apps that cannot live in one gateway: two with one bundle id, and two whose route
    /// tables list the same host for different teams with a path both would open (the
    /// host's `apple-app-site-association` could not say which app a link opens). Each
    /// conflict names both apps and the routes.
    static func reportConflicts(_ apps: [AppConfig], reader: inout ConfigReader) {
        for j in apps.indices {
            for i in 0..<j {
                let a = apps[i], b = apps[j]
                if a.bundleId == b.bundleId {
                    reader.report(.appsConflict, at: b.path.components.isEmpty ? .root : b.path.appending("topic"),
                                  "apps \(TextSafety.quoted(a.name)) and \(TextSafety.quoted(b.name)) have the same bundle id \(TextSafety.quoted(a.bundleId)); each app needs its own")
                }
                // An `apns-topic` override replaces the bundle id on every request: two apps
                // with one override would send each other's notifications.
                if let topic = a.apns.topic, topic == b.apns.topic {
                    let own = reader.entries.contains { $0.path == b.path.appending("apns").appending("topic") }
                    reader.report(.appsConflict, at: own ? reader.where(b.path.appending("apns").appending("topic")) : reader.where(JSONPath.root.appending("apns").appending("topic")),
                                  "apps \(TextSafety.quoted(a.name)) and \(TextSafety.quoted(b.name)) would both send with apns-topic \(TextSafety.quoted(topic))"
                                      + (own ? "; each app needs its own" : " (the top level's apns.topic is every app's): set it per app, apps.NAME.apns.topic"))
                }
                let team = a.routes.app.teamId, otherTeam = b.routes.app.teamId
                guard team != otherTeam else { continue }
                let shared = a.routes.hosts.filter(b.routes.hosts.contains)
                guard let host = shared.first else { continue }
                let overlaps = a.routes.overlaps(with: b.routes)
                guard !overlaps.isEmpty else { continue }
                let routes = overlaps.prefix(5).map { o in
                    "\(a.name) route \(TextSafety.quoted(o.route.name)) (\(o.route.pattern)) and \(b.name) route \(TextSafety.quoted(o.otherRoute.name)) (\(o.otherRoute.pattern)) both match \(o.examplePath)"
                }.joined(separator: "; ")
                let more = overlaps.count > 5 ? " (and \(overlaps.count - 5) more)" : ""
                reader.report(.appsConflict, at: b.path.appending("routes"),
                              "apps \(TextSafety.quoted(a.name)) (team \(team)) and \(TextSafety.quoted(b.name)) (team \(otherTeam)) both claim host \(TextSafety.quoted(host)) for the same paths: \(routes)\(more)")
            }
        }
    }
}

/// The settings an app may give for itself (or inherit from the top level).
struct AppSettings {
    static let keys = ["topic", "routes", "templates", "apns"]

    var topic: ConfigReader.Setting<String>?
    var routes: ConfigReader.Setting<String>?
    var templates: ConfigReader.Setting<String>?

    /// `defaults`: the top level, where `routes` and `templates` have their defaults. The
    /// templates folder's default is taken only where that folder exists: a configuration
    /// that names none and has none there has no templates (a folder it names must exist).
    static func read(_ object: JSONObject, at path: JSONPath, reader: inout ConfigReader, defaults: Bool) -> AppSettings {
        let defaultTemplates = "../Templates"
        let hasDefaultTemplates = defaults && GatewayConfig.isDirectory(GatewayConfig.resolve(defaultTemplates, in: reader.folder))
        return AppSettings(
            topic: reader.string(object, "topic", at: path, validate: BundleID.problem(with:)),
            routes: reader.path(object, "routes", at: path, default: defaults ? "routes.json" : nil),
            templates: reader.path(object, "templates", at: path, default: hasDefaultTemplates ? defaultTemplates : nil))
    }

    /// These settings, with what they leave out taken from `common`.
    func inheriting(_ common: AppSettings) -> AppSettings {
        AppSettings(topic: topic ?? common.topic, routes: routes ?? common.routes, templates: templates ?? common.templates)
    }
}

extension ConfigReader {
    /// `apps`: an object of apps by name, not empty. Nil when absent (one app) or unusable.
    mutating func appsSection(_ object: JSONObject) -> JSONObject? {
        guard let json = object["apps"] else { return nil }
        let path = JSONPath.root.appending("apps")
        guard case .object(let apps) = json else {
            report(.wrongType, at: path, "expected an object of apps by name ({\"shop\": {\"routes\": …}}), found \(json.kindDescription)")
            return nil
        }
        if apps.members.isEmpty {
            report(.missing, at: path, "name at least one app, or leave \"apps\" out for a single app configured at the top level")
            return nil
        }
        return apps
    }
}

extension AppConfig {
    /// The app as the API and `pushgate apps` describe it.
    var gatewayApp: GatewayApp {
        GatewayApp(name: name, routes: routes, planner: planner(), environment: apns.environment,
                   environments: apns.environments, teamId: apns.teamId, keyId: apns.keyId)
    }
}

extension GatewayConfig {
    /// The app of a campaign file: its `"app"`, `--app`, or the only app (the API's rule,
    /// `CampaignAppChoice`). A campaign and `--app` that disagree, or an app that is not
    /// configured, is a usage error (exit 2).
    func app(forCampaign bytes: [UInt8], at path: String, option: String?) -> Result<AppConfig, CLIFailure> {
        let place = Diagnostic(.unknownApp, at: .file(path, at: JSONPath.root.appending("app")), "").location.place
        return app(named: (try? JSONParser().parse(bytes))?.objectValue?["app"]?.stringValue, at: place, option: option)
    }

    /// The app `--app` names, or the only one.
    func app(named name: String?) -> Result<AppConfig, CLIFailure> { app(named: nil, at: "", option: name) }

    private func app(named: String?, at place: String, option: String?) -> Result<AppConfig, CLIFailure> {
        let names = apps.map(\.name)
        switch CampaignAppChoice.of(named: named, given: option, candidates: names) {
        case .chosen(let index):
            return .success(apps[index])
        case .disagree(let named, let given):
            return .failure(CLIFailure(message: "\(place): the campaign is for app \(TextSafety.quoted(named)), --app says \(TextSafety.quoted(given)) [unknownApp]",
                                       status: ExitStatus.usage))
        case .unknown(let name, let inDocument):
            return .failure(CLIFailure(
                message: "\(inDocument ? place : "--app"): no app named \(TextSafety.quoted(name)) in \(TextSafety.escapedForDisplay(source)); the apps are \(ConfigReader.list(names)) [unknownApp]",
                status: ExitStatus.usage))
        case .unnamed:
            return .failure(CLIFailure(
                message: "\(TextSafety.escapedForDisplay(source)) configures \(apps.count) apps (\(ConfigReader.list(names))): choose one with --app NAME [unknownApp]",
                status: ExitStatus.usage))
        }
    }
}
