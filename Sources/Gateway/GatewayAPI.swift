import APNs
import DeepLinks
import HTTPServer
import Payloads
import StrictJSON
import Timing

/// Everything the API needs, built by the `serve` command from the configuration.
public struct GatewayComponents: Sendable {
    public var routeTable: RouteTable
    /// The route table as configured, for `GET /v1/routes`.
    public var planner: CampaignPlanner
    public var sender: any NotificationSender
    public var dryRunSender: any NotificationSender
    /// The configuration says dry run: `sender` sends nothing.
    public var configuredIsDryRun: Bool
    public var readiness: [ReadinessCheck]
    /// `guard.confirmAbove`: big campaigns must confirm their device count.
    public var sendGuard: SendGuard

    public init(routeTable: RouteTable, planner: CampaignPlanner, sender: any NotificationSender,
                dryRunSender: any NotificationSender, configuredIsDryRun: Bool, readiness: [ReadinessCheck],
                sendGuard: SendGuard = SendGuard()) {
        self.sendGuard = sendGuard
        self.routeTable = routeTable
        self.planner = planner
        self.sender = sender
        self.dryRunSender = dryRunSender
        self.configuredIsDryRun = configuredIsDryRun
        self.readiness = readiness
    }
}

/// Assembles the service: every endpoint, documented in `GET /openapi.json`.
public enum GatewayAPI {
    public static func makeService(_ components: GatewayComponents, settings: ServerSettings, metrics: Metrics,
                                   log: RequestLog, campaigns: DurableCampaigns,
                                   clock: any TimeSource = SystemClock()) throws(APIRouter.ConflictError) -> GatewayService {
        var builder = APIRouterBuilder()
        let monitor = ReadinessMonitor(checks: components.readiness, metrics: metrics)
        HealthEndpoints.register(in: &builder, metrics: metrics, monitor: monitor)
        LinkEndpoints.register(in: &builder, table: components.routeTable, metrics: metrics)
        PreviewEndpoint.register(in: &builder, planner: components.planner, metrics: metrics)
        TemplateEndpoints.register(in: &builder, templates: components.planner.templates)
        PreviewPageEndpoints.register(in: &builder)
        CampaignEndpoints.register(in: &builder, planner: components.planner, configuredIsDryRun: components.configuredIsDryRun,
                                   sendGuard: components.sendGuard, campaigns: campaigns, metrics: metrics)
        TokenEndpoints.register(in: &builder, storage: campaigns.storage, clock: clock)
        let document = Array(OpenAPIDocument.text(keysRequired: !settings.apiKeys.isEmpty).utf8)
        builder.add("GET", "/openapi.json", operation: "openapi", public: true) { _, _ in jsonResponse(document) }
        return GatewayService(router: try builder.build(), keyring: APIKeyring(settings.apiKeys),
                              defaultRateLimit: settings.defaultRateLimit, metrics: metrics, log: log, clock: clock)
    }
}
