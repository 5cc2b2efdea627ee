import APNs
import Outbox
import DeepLinks
import HTTPServer
import Payloads
import StrictJSON
import Timing

/// Everything the API needs, built by the `serve` command from the configuration.
public struct GatewayComponents: Sendable {
    /// The apps served: each with its route table, templates and topic.
    public var apps: AppDirectory
    public var sender: any NotificationSender
    public var dryRunSender: any NotificationSender
    /// The configuration says dry run: `sender` sends nothing.
    public var configuredIsDryRun: Bool
    public var readiness: [ReadinessCheck]
    /// `guard.confirmAbove`: big campaigns must confirm their device count.
    public var sendGuard: SendGuard
    /// Each app's channel management client; nil in a dry run.
    public var channels: ChannelClientLookup?

    public init(apps: AppDirectory, sender: any NotificationSender,
                dryRunSender: any NotificationSender, configuredIsDryRun: Bool, readiness: [ReadinessCheck],
                sendGuard: SendGuard = SendGuard(), channels: ChannelClientLookup? = nil) {
        self.sendGuard = sendGuard
        self.channels = channels
        self.apps = apps
        self.sender = sender
        self.dryRunSender = dryRunSender
        self.configuredIsDryRun = configuredIsDryRun
        self.readiness = readiness
    }

    /// One app, `default`, with this table and planner (sandbox).
    public init(routeTable: RouteTable, planner: CampaignPlanner, sender: any NotificationSender,
                dryRunSender: any NotificationSender, configuredIsDryRun: Bool, readiness: [ReadinessCheck],
                sendGuard: SendGuard = SendGuard()) {
        let app = GatewayApp(name: "default", routes: routeTable, planner: planner, environment: .sandbox,
                             environments: [.sandbox], teamId: nil, keyId: nil)
        self.init(apps: AppDirectory([app]), sender: sender, dryRunSender: dryRunSender, configuredIsDryRun: configuredIsDryRun,
                  readiness: readiness, sendGuard: sendGuard)
    }
}

/// Assembles the service: every endpoint, documented in `GET /openapi.json`.
public enum GatewayAPI {
    public static func makeService(_ components: GatewayComponents, settings: ServerSettings, metrics: Metrics,
                                   log: RequestLog, campaigns: DurableCampaigns,
                                   clock: any TimeSource) throws(APIRouter.ConflictError) -> GatewayService {
        var builder = APIRouterBuilder()
        let monitor = ReadinessMonitor(checks: components.readiness, metrics: metrics)
        HealthEndpoints.register(in: &builder, metrics: metrics, monitor: monitor,
                                 privateProbes: settings.privateProbes && !settings.apiKeys.isEmpty)
        let apps = components.apps
        builder.add("GET", "/v1/apps", operation: "apps.list") { _, parameters in
            jsonResponse(GatewayApp.list(apps.visible(to: parameters.caller)))
        }
        LinkEndpoints.register(in: &builder, apps: apps, metrics: metrics)
        PreviewEndpoint.register(in: &builder, apps: apps, metrics: metrics)
        TemplateEndpoints.register(in: &builder, apps: apps)
        PreviewPageEndpoints.register(in: &builder)
        CampaignEndpoints.register(in: &builder, apps: apps, configuredIsDryRun: components.configuredIsDryRun,
                                   sendGuard: components.sendGuard, campaigns: campaigns, metrics: metrics, channels: components.channels)
        CampaignPartEndpoints.register(in: &builder, sendGuard: components.sendGuard, campaigns: campaigns)
        TokenEndpoints.register(in: &builder, apps: apps, storage: campaigns.storage, clock: clock)
        ChannelEndpoints.register(in: &builder, apps: apps, clients: components.channels)
        LiveActivityEndpoints.register(in: &builder, apps: apps, configuredIsDryRun: components.configuredIsDryRun,
                                       sendGuard: components.sendGuard, campaigns: campaigns, metrics: metrics, clock: clock)
        let document = Array(OpenAPIDocument.text(keysRequired: !settings.apiKeys.isEmpty, privateProbes: settings.privateProbes).utf8)
        builder.add("GET", "/openapi.json", operation: "openapi", public: true) { _, _ in jsonResponse(document) }
        return GatewayService(router: try builder.build(), keyring: APIKeyring(settings.apiKeys),
                              defaultRateLimit: settings.defaultRateLimit, metrics: metrics, log: log, clock: clock,
                              trustedProxies: settings.trustedProxies, failedAuthenticationLimit: settings.failedAuthenticationLimit,
                              readiness: monitor)
    }
}
