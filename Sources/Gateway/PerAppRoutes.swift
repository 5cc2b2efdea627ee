import HTTPServer
import Synchronization

/// Things a handler learns that the request log records (the app it served).
public final class RequestNotes: Sendable {
    private let state = Mutex<String?>(nil)

    public init() {}

    public var app: String? {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

public typealias AppHandler = @Sendable (HTTPRequest, PathParameters, GatewayApp) throws(Problem) -> HTTPResponse

extension APIRouterBuilder {
    /// An endpoint of one app, in the one style every per-app endpoint uses: the app in
    /// the path, `/v1/apps/{app}` + `suffix`. The same endpoint without the prefix
    /// (`/v1` + `suffix`) serves the only app the caller may use, so a single-app gateway
    /// keeps its short paths. An unknown app, or one the key may not use, is 404.
    mutating func addPerApp(_ method: String, _ suffix: String, operation: String, apps: AppDirectory,
                            _ handler: @escaping AppHandler) {
        add(method, "/v1/apps/{app}" + suffix, operation: operation) { request, parameters throws(Problem) in
            let app = try apps.app(named: parameters["app"] ?? "", for: parameters.caller)
            parameters.notes.app = app.name
            return try handler(request, parameters, app)
        }
        add(method, "/v1" + suffix, operation: operation) { request, parameters throws(Problem) in
            let app = try apps.onlyApp(for: parameters.caller, path: "use /v1/apps/{app}" + suffix)
            parameters.notes.app = app.name
            return try handler(request, parameters, app)
        }
    }
}
