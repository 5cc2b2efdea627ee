import Synchronization

/// The service's counters, rendered in the Prometheus text format (version 0.0.4).
/// Label values come from fixed sets (operations, codes, reasons) or are escaped.
public final class Metrics: Sendable {
    /// Seconds; Apple answers in tens of milliseconds, a slow path in seconds.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.latencyBuckets.count)
        var sum = 0.0
        var count = 0
    }

    private struct State {
        var requests: [String: Int] = [:]          // operation \0 status
        var linksRejected: [String: Int] = [:]     // code
        var notifications: [String: Int] = [:]     // result \0 reason
        var apnsLatency = Histogram()
    }

    private let state = Mutex(State())
    private let inFlight = Atomic<Int>(0)
    private let queueDepth = Atomic<Int>(0)

    public init() {}

    public func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    public func requestFinished() { inFlight.subtract(1, ordering: .relaxed) }

    public func recordRequest(operation: String, status: Int) {
        state.withLock { $0.requests[operation + "\u{0}" + String(status), default: 0] += 1 }
    }

    public func recordLinkRejected(code: String) {
        state.withLock { $0.linksRejected[code, default: 0] += 1 }
    }

    /// `result` is delivered/failed/unregistered/skipped; `reason` is APNs' reason or "".
    public func recordNotification(result: String, reason: String) {
        state.withLock { $0.notifications[result + "\u{0}" + reason, default: 0] += 1 }
    }

    public func recordAPNsLatency(seconds: Double) {
        state.withLock { state in
            for (i, bound) in Metrics.latencyBuckets.enumerated() where seconds <= bound {
                state.apnsLatency.counts[i] += 1
            }
            state.apnsLatency.sum += seconds
            state.apnsLatency.count += 1
        }
    }

    public func setQueueDepth(_ depth: Int) { queueDepth.store(depth, ordering: .relaxed) }
    public func adjustQueueDepth(by delta: Int) { queueDepth.add(delta, ordering: .relaxed) }

    public func render() -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        out += "# HELP pushgate_http_requests_total HTTP requests answered, by operation and status.\n"
        out += "# TYPE pushgate_http_requests_total counter\n"
        for (key, value) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "pushgate_http_requests_total{operation=\(label(parts[0])),status=\(label(parts[1]))} \(value)\n"
        }
        out += "# HELP pushgate_http_requests_in_flight HTTP requests being handled now.\n"
        out += "# TYPE pushgate_http_requests_in_flight gauge\n"
        out += "pushgate_http_requests_in_flight \(inFlight.load(ordering: .relaxed))\n"
        out += "# HELP pushgate_links_rejected_total Deep links rejected, by code.\n"
        out += "# TYPE pushgate_links_rejected_total counter\n"
        for (code, value) in snapshot.linksRejected.sorted(by: { $0.key < $1.key }) {
            out += "pushgate_links_rejected_total{code=\(label(code))} \(value)\n"
        }
        out += "# HELP pushgate_notifications_total Notifications finished, by result and APNs reason.\n"
        out += "# TYPE pushgate_notifications_total counter\n"
        for (key, value) in snapshot.notifications.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "pushgate_notifications_total{result=\(label(parts[0])),reason=\(label(parts[1]))} \(value)\n"
        }
        out += "# HELP pushgate_apns_request_duration_seconds Time from sending a request to APNs to its answer.\n"
        out += "# TYPE pushgate_apns_request_duration_seconds histogram\n"
        for (i, bound) in Metrics.latencyBuckets.enumerated() {
            out += "pushgate_apns_request_duration_seconds_bucket{le=\"\(formatBound(bound))\"} \(snapshot.apnsLatency.counts[i])\n"
        }
        out += "pushgate_apns_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.apnsLatency.count)\n"
        out += "pushgate_apns_request_duration_seconds_sum \(snapshot.apnsLatency.sum)\n"
        out += "pushgate_apns_request_duration_seconds_count \(snapshot.apnsLatency.count)\n"
        out += "# HELP pushgate_campaign_queue_depth Notifications accepted and not yet finished.\n"
        out += "# TYPE pushgate_campaign_queue_depth gauge\n"
        out += "pushgate_campaign_queue_depth \(queueDepth.load(ordering: .relaxed))\n"
        return out
    }

    private func formatBound(_ bound: Double) -> String {
        bound == bound.rounded() ? String(Int(bound)) : String(bound)
    }

    /// A quoted label value with Prometheus' escapes.
    private func label<S: StringProtocol>(_ value: S) -> String {
        var out = "\""
        for ch in value.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }
}
