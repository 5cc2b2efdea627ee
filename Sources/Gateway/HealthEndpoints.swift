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

/// The probes. Each answers on the I/O thread from state made elsewhere: a constant for
/// `/healthz`, the readiness monitor's last round for `/readyz`, the counters and the
/// monitor's samples for `/metrics`. None of them waits for a lock that long work holds.
enum HealthEndpoints {
    /// `privateProbes`: `/readyz` and `/metrics` need an admin key (they name every app,
    /// key id and upstream URL); a client key is answered as if they did not exist.
    static func register(in builder: inout APIRouterBuilder, metrics: Metrics, monitor: ReadinessMonitor, privateProbes: Bool = false) {
        let healthy = JSONWriter.bytes { w in
            w.object { w in w.member("status", "ok") }
            w.raw("\n")
        }
        builder.add("GET", "/healthz", operation: "healthz", public: true) { _, _ in
            jsonResponse(healthy)
        }
        builder.add("GET", "/readyz", operation: "readyz", public: !privateProbes) { request, parameters throws(Problem) in
            guard parameters.caller.isAdmin else { throw .notFound(request.path) }
            let answer = monitor.latest
            return jsonResponse(status: answer.status, answer.body)
        }
        builder.add("GET", "/metrics", operation: "metrics", public: !privateProbes) { request, parameters throws(Problem) in
            guard parameters.caller.isAdmin else { throw .notFound(request.path) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: Array(metrics.render().utf8))
        }
    }
}
