import HTTPServer
import StrictJSON

/// One thing `/readyz` checks (configuration, signing key, storage…). `check` returns
/// nil when ready, or why not. A check that is not `blocking` is shown but leaves the
/// status ready (e.g. sends paused by APNs: campaigns are still accepted).
public struct ReadinessCheck: Sendable {
    public var name: String
    public var blocking: Bool
    public var check: @Sendable () -> String?

    public init(name: String, blocking: Bool = true, check: @escaping @Sendable () -> String?) {
        self.name = name
        self.blocking = blocking
        self.check = check
    }
}

enum HealthEndpoints {
    static func register(in builder: inout APIRouterBuilder, metrics: Metrics, checks: [ReadinessCheck]) {
        builder.add("GET", "/healthz", operation: "healthz", public: true) { _, _ in
            jsonResponse(Array("{\"status\":\"ok\"}\n".utf8))
        }
        builder.add("GET", "/readyz", operation: "readyz", public: true) { _, _ in
            var ready = true
            var w = JSONWriter()
            w.raw("{\"checks\":{")
            for (i, check) in checks.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.string(check.name)
                w.byte(UInt8(ascii: ":"))
                if let problem = check.check() {
                    if check.blocking { ready = false }
                    w.string(problem)
                } else {
                    w.raw("\"ok\"")
                }
            }
            w.raw("},\"status\":")
            w.string(ready ? "ready" : "not ready")
            w.raw("}\n")
            return jsonResponse(status: ready ? 200 : 503, w.bytes)
        }
        builder.add("GET", "/metrics", operation: "metrics", public: true) { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                         body: Array(metrics.render().utf8))
        }
    }
}
