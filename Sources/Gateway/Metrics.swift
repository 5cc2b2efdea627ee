import Synchronization
import Outbox

/// The service's counters, rendered in the Prometheus text format (version 0.0.4).
/// Label values come from fixed sets (operations, codes, reasons) or are escaped.
public final class Metrics: Sendable {
    /// Seconds; Apple answers in tens of milliseconds, a slow path in seconds.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.latencyBuckets.count)
        var sum = 0.0
        var count = 0

        mutating func record(_ seconds: Double) {
            for (i, bound) in Metrics.latencyBuckets.enumerated() where seconds <= bound {
                counts[i] += 1
            }
            sum += seconds
            count += 1
        }
    }

    private struct State {
        var requests: [String: Int] = [:]          // operation \0 status
        var linksRejected: [String: Int] = [:]     // app \0 code
        var problems: [String: Int] = [:]          // a problem's top-level code
        var problemErrors: [String: Int] = [:]     // the code of an entry in a problem's errors[]
        var notifications: [String: Int] = [:]     // result \0 reason
        var apnsLatency: [String: Histogram] = [:] // app \0 push type
    }

    private let state = Mutex(State())
    private let inFlight = Atomic<Int>(0)
    private let queueDepth = Atomic<Int>(0)
    private let lateClaims = Atomic<Int>(0)
    private let sendingPause = Mutex<(@Sendable () -> Double)?>(nil)
    private let apnsReachable = Mutex<(@Sendable () -> Bool)?>(nil)
    private let keyHolds = Mutex<(@Sendable () -> [(keyId: String, stopped: String?)])?>(nil)
    private let journalBytes = Mutex<(@Sendable () -> Int64?)?>(nil)
    /// The observed gauges as last sampled (`sampleObservedGauges`): their sources take
    /// locks that long work may hold, so a scrape reads these instead of asking them.
    private let observed = Mutex<(pausedSeconds: Double, reachable: Bool, keys: [(keyId: String, stopped: String?)])>((0, true, []))

    public init() {}

    public func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    public func requestFinished() { inFlight.subtract(1, ordering: .relaxed) }

    public func recordRequest(operation: String, status: Int) {
        state.withLock { $0.requests[operation + "\u{0}" + String(status), default: 0] += 1 }
    }

    /// A deep link rejected by `app`'s route table (a check, a preview or a campaign).
    public func recordLinkRejected(app: String, code: String) {
        state.withLock { $0.linksRejected[app + "\u{0}" + code, default: 0] += 1 }
    }

    /// An answered RFC 9457 problem: its top-level `code` (`validationFailed`, `notFound`,
    /// …) and the code of each of its `errors` (`invalidToken`, `unknownKey`, …), the
    /// codes of docs/errors.md.
    public func recordProblem(code: String, errors: [String]) {
        state.withLock { state in
            state.problems[code, default: 0] += 1
            for error in errors { state.problemErrors[error, default: 0] += 1 }
        }
    }

    /// `count` devices ended as `result` (delivered/failed/unregistered/skipped/…); `reason` is APNs' reason or "";
    /// `app` the configured app, `pushType` Apple's push type (`alert`, `background`, …).
    public func recordNotifications(app: String, pushType: String, result: String, reason: String, count: Int) {
        let key = app + "\u{0}" + pushType + "\u{0}" + result + "\u{0}" + reason
        state.withLock { $0.notifications[key, default: 0] += count }
    }

    /// Requests to APNs for `app` of `pushType`, each from sending it to its answer.
    public func recordAPNsLatencies(app: String, pushType: String, seconds: [Double]) {
        let key = app + "\u{0}" + pushType
        state.withLock { state in
            // Changed in place: a copy out and back would copy its bucket array every call.
            for one in seconds { state.apnsLatency[key, default: Histogram()].record(one) }
        }
    }

    public func setQueueDepth(_ depth: Int) { queueDepth.store(depth, ordering: .relaxed) }
    public func recordLateClaim(_ deliveries: Int) { lateClaims.add(deliveries, ordering: .relaxed) }

    /// `source` answers, at each scrape, how many seconds sends remain paused (0: not paused).
    /// Sampled at once and then by `sampleObservedGauges` (the readiness monitor's rounds).
    public func observeSendingPause(_ source: @escaping @Sendable () -> Double) {
        sendingPause.withLock { $0 = source }
        sampleObservedGauges()
    }

    /// Whether the transport can reach APNs (its circuit breaker closed). Sampled like
    /// the sending pause.
    public func observeAPNsReachability(_ source: @escaping @Sendable () -> Bool) {
        apnsReachable.withLock { $0 = source }
        sampleObservedGauges()
    }

    /// Asks the observed sources for their values now (off the request path).
    public func sampleObservedGauges() {
        let paused = max(0, sendingPause.withLock { $0 }?() ?? 0)
        let reachable = apnsReachable.withLock { $0 }?() ?? true
        let keys = keyHolds.withLock { $0 }?() ?? []
        observed.withLock { $0 = (paused, reachable, keys) }
    }

    /// Each signing key, and Apple's reason while APNs refuses it (sends with it stopped).
    /// Sampled like the sending pause.
    public func observeKeyHolds(_ source: @escaping @Sendable () -> [(keyId: String, stopped: String?)]) {
        keyHolds.withLock { $0 = source }
        sampleObservedGauges()
    }

    /// The storage's write-ahead log bytes written by this process
    /// (`CampaignStorage.journalBytesWritten`), read at each scrape (it takes no lock a
    /// transaction holds); nil: no such metric (PostgreSQL keeps its WAL itself).
    public func observeJournalBytes(_ source: @escaping @Sendable () -> Int64?) {
        journalBytes.withLock { $0 = source }
    }

    public func render() -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        family("pushgate_http_requests_total", "counter", "HTTP requests answered, by operation and status.", to: &out)
        twoLabelSamples("pushgate_http_requests_total", "operation", "status", snapshot.requests, to: &out)
        family("pushgate_http_requests_in_flight", "gauge", "HTTP requests being handled now.", to: &out)
        out += "pushgate_http_requests_in_flight \(inFlight.load(ordering: .relaxed))\n"
        family("pushgate_http_problems_total", "counter", "HTTP problem answers (RFC 9457), by their top-level code.", to: &out)
        codeSamples("pushgate_http_problems_total", snapshot.problems, to: &out)
        family("pushgate_http_problem_errors_total", "counter", "Entries in the errors of HTTP problem answers, by code.", to: &out)
        codeSamples("pushgate_http_problem_errors_total", snapshot.problemErrors, to: &out)
        family("pushgate_links_rejected_total", "counter", "Deep links rejected, by app and code.", to: &out)
        labelledSamples("pushgate_links_rejected_total", ["app", "code"], snapshot.linksRejected, to: &out)
        family("pushgate_notifications_total", "counter", "Notifications finished, by app, push type, result and APNs reason.", to: &out)
        labelledSamples("pushgate_notifications_total", ["app", "push_type", "result", "reason"], snapshot.notifications, to: &out)
        family("pushgate_apns_request_duration_seconds", "histogram", "Time from sending a request to APNs to its answer, by app and push type.", to: &out)
        for (key, histogram) in snapshot.apnsLatency.sorted(by: { $0.key < $1.key }) {
            let name = "pushgate_apns_request_duration_seconds"
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            let appLabel = "app=\(label(parts[0])),push_type=\(label(parts[1]))"
            for (i, bound) in Metrics.latencyBuckets.enumerated() {
                out += "\(name)_bucket{\(appLabel),le=\"\(formatBound(bound))\"} \(histogram.counts[i])\n"
            }
            out += "\(name)_bucket{\(appLabel),le=\"+Inf\"} \(histogram.count)\n"
            out += "\(name)_sum{\(appLabel)} \(histogram.sum)\n"
            out += "\(name)_count{\(appLabel)} \(histogram.count)\n"
        }
        family("pushgate_campaign_queue_depth", "gauge", "Notifications accepted and not yet finished.", to: &out)
        out += "pushgate_campaign_queue_depth \(queueDepth.load(ordering: .relaxed))\n"
        family("pushgate_claims_past_lease_total", "counter",
               "Deliveries claimed but not sent because the claim came back after its lease ran out.", to: &out)
        out += "pushgate_claims_past_lease_total \(lateClaims.load(ordering: .relaxed))\n"
        if let bytes = journalBytes.withLock({ $0 })?() {
            family("pushgate_storage_journal_bytes_total", "counter",
                   "Bytes this process wrote to SQLite's write-ahead log (frames: pages and their headers; checkpoints not counted).", to: &out)
            out += "pushgate_storage_journal_bytes_total \(bytes)\n"
        }
        family("pushgate_apns_sending_paused_seconds", "gauge",
               "Seconds until sends resume after APNs answered TooManyProviderTokenUpdates (0: sending).", to: &out)
        let sampled = observed.withLock { $0 }
        let paused = sampled.pausedSeconds
        out += "pushgate_apns_sending_paused_seconds \(paused == paused.rounded() ? String(Int(paused)) : String(paused))\n"
        family("pushgate_apns_reachable", "gauge",
               "1 while APNs can be reached, 0 while every connection attempt fails (sends wait; probed with backoff).", to: &out)
        out += "pushgate_apns_reachable \(sampled.reachable ? 1 : 0)\n"
        family("pushgate_apns_key_stopped", "gauge",
               "1 while APNs refuses the signing key (an authentication failure; sends with it stopped, probed with backoff), "
                   + "with Apple's reason; 0 while it is accepted.", to: &out)
        for key in sampled.keys {
            out += "pushgate_apns_key_stopped{key_id=\(label(key.keyId)),reason=\(label(key.stopped ?? ""))} "
                + "\(key.stopped == nil ? 0 : 1)\n"
        }
        return out
    }

    /// The `# HELP` and `# TYPE` lines that open a metric family.
    private func family(_ name: String, _ type: String, _ help: String, to out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// Samples counted by one `code` label, sorted by code.
    private func codeSamples(_ name: String, _ counts: [String: Int], to out: inout String) {
        for (code, value) in counts.sorted(by: { $0.key < $1.key }) {
            out += "\(name){code=\(label(code))} \(value)\n"
        }
    }

    /// Samples counted under `first + "\u{0}" + second` keys, sorted by key.
    /// One sample per key: the key's NUL-separated parts are the labels' values, in order.
    private func labelledSamples(_ name: String, _ labels: [String], _ counts: [String: Int], to out: inout String) {
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            let pairs = zip(labels, parts).map { "\($0)=\(label($1))" }.joined(separator: ",")
            out += "\(name){\(pairs)} \(value)\n"
        }
    }

    private func twoLabelSamples(_ name: String, _ firstLabel: String, _ secondLabel: String,
                                 _ counts: [String: Int], to out: inout String) {
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "\(name){\(firstLabel)=\(label(parts[0])),\(secondLabel)=\(label(parts[1]))} \(value)\n"
        }
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
extension Metrics: OutboxMetrics {}
