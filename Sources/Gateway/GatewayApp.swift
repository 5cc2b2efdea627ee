import APNs
import DeepLinks
import Payloads
import StrictJSON

/// One app the gateway sends for, as the API and the commands see it: its name, route
/// table and planner (bundle id, templates), and the APNs identity its campaigns use.
public struct GatewayApp: Sendable {
    public let name: String
    public let routes: RouteTable
    public let planner: CampaignPlanner
    /// The environment a campaign gets when it does not choose one.
    public let environment: APNsEnvironment
    /// The environments a campaign may choose; includes `environment`.
    public let environments: [APNsEnvironment]
    /// The APNs team and key the app's provider tokens are signed with (nil in a dry run
    /// without credentials).
    public let teamId: String?
    public let keyId: String?

    public init(name: String, routes: RouteTable, planner: CampaignPlanner, environment: APNsEnvironment,
                environments: [APNsEnvironment], teamId: String?, keyId: String?) {
        self.name = name
        self.routes = routes
        self.planner = planner
        self.environment = environment
        self.environments = environments
        self.teamId = teamId
        self.keyId = keyId
    }

    /// The bundle id: `apns-topic` before Apple's per-push-type suffix.
    public var bundleId: String { planner.bundleId }

    /// `{"name":…,"bundle_id":…,"hosts":[…],"scheme":…,"team_id":…,"key_id":…,"environment":…,"environments":[…]}`
    public func write(to w: inout JSONWriter) {
        w.object { w in
            w.member("name", name)
            w.member("bundle_id", bundleId)
            w.member("hosts", array: { w in for host in routes.hosts { w.value(.string(host)) } })
            w.member("scheme", orNull: routes.app.scheme)
            w.member("app_id", routes.app.appID)
            w.member("team_id", orNull: teamId)
            w.member("key_id", orNull: keyId)
            w.member("environment", environment.rawValue)
            w.member("environments", array: { w in for e in environments { w.value(.string(e.rawValue)) } })
            w.member("routes", routes.routes.count)
            w.member("fingerprint", routes.fingerprint)
        }
    }

    /// `{"apps":[…]}` and a newline.
    public static func list(_ apps: [GatewayApp]) -> [UInt8] {
        var w = JSONWriter()
        w.object { w in
            w.member("apps", array: { w in for app in apps { app.write(to: &w) } })
        }
        w.raw("\n")
        return w.bytes
    }
}

extension GatewayApp {
    /// Plans a campaign for this app; a chosen `environment` must be one the app allows.
    public func plan(json: JSON, requireDevices: Bool = true) -> Result<CampaignPlan, CampaignRejection> {
        var planner = planner
        planner.requireDevices = requireDevices
        return check(planner.plan(json: json))
    }

    public func plan(jsonBytes: [UInt8], requireDevices: Bool = true) -> Result<CampaignPlan, CampaignRejection> {
        var planner = planner
        planner.requireDevices = requireDevices
        return check(planner.plan(jsonBytes: jsonBytes))
    }

    /// The environment a planned campaign is sent in.
    public func environment(of plan: CampaignPlan) -> APNsEnvironment {
        plan.campaign.environment.flatMap(APNsEnvironment.init(rawValue:)) ?? environment
    }

    private func check(_ result: Result<CampaignPlan, CampaignRejection>) -> Result<CampaignPlan, CampaignRejection> {
        guard case .success(let plan) = result, let chosen = plan.campaign.environment,
              let value = APNsEnvironment(rawValue: chosen), !environments.contains(value) else { return result }
        return .failure(CampaignRejection(problems: [PayloadError(.invalidValue, at: JSONPath.root.appending("environment"),
            "app \(JSONWriter.quoted(name)) sends in \(environments.map { JSONWriter.quoted($0.rawValue) }.joined(separator: " and ")) only (apns.environments), not \(JSONWriter.quoted(chosen))")]))
    }
}
