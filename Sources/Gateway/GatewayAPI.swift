import APNs
import DeepLinks
import HTTPServer
import Payloads
import StrictJSON

/// Everything the API needs, built by the `serve` command from the configuration.
public struct GatewayComponents: Sendable {
    public var routeTable: RouteTable
    /// The route table as configured, for `GET /v1/routes`.
    public var routesJSON: JSON
    public var planner: CampaignPlanner
    public var sender: any NotificationSender
    public var dryRunSender: any NotificationSender
    /// The configuration says dry run: `sender` sends nothing.
    public var configuredIsDryRun: Bool
    public var readiness: [ReadinessCheck]

    public init(routeTable: RouteTable, routesJSON: JSON, planner: CampaignPlanner, sender: any NotificationSender,
                dryRunSender: any NotificationSender, configuredIsDryRun: Bool, readiness: [ReadinessCheck]) {
        self.routeTable = routeTable
        self.routesJSON = routesJSON
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
                                   log: RequestLog, runner: CampaignRunner,
                                   now: @escaping @Sendable () -> Double = wallClockSeconds) throws(APIRouter.ConflictError) -> GatewayService {
        var builder = APIRouterBuilder()
        HealthEndpoints.register(in: &builder, metrics: metrics, checks: components.readiness)
        LinkEndpoints.register(in: &builder, table: components.routeTable, routesJSON: components.routesJSON, metrics: metrics)
        PreviewEndpoint.register(in: &builder, planner: components.planner, metrics: metrics)
        CampaignEndpoints.register(in: &builder, planner: components.planner,
                                   senders: .init(configured: components.sender, dryRun: components.dryRunSender,
                                                  configuredIsDryRun: components.configuredIsDryRun),
                                   runner: runner, metrics: metrics)
        let document = Array(OpenAPIDocument.text.utf8)
        builder.add("GET", "/openapi.json", operation: "openapi", public: true) { _, _ in jsonResponse(document) }
        return GatewayService(router: try builder.build(), keyring: APIKeyring(settings.apiKeys),
                              defaultRateLimit: settings.defaultRateLimit, metrics: metrics, log: log, now: now)
    }
}
