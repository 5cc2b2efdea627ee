import APNs
import Payloads
import StrictJSON
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// Everything `pushgate send` says about a campaign: one JSON line per device with
/// `--json`, a progress bar on a terminal, and the summary at the end.
struct SendReport {
    let json: Bool
    let dryRun: Bool
    private let progress: Bool
    private var lastProgress: UInt64 = 0
    private let clock = SystemClock()
    private let started = SystemClock().monotonicNanoseconds()

    private(set) var delivered = 0
    private(set) var dryRuns = 0
    private(set) var unregistered = 0
    private(set) var invalid = 0
    private(set) var failures: [String: Int] = [:]
    /// Devices not sent because the whole send stopped (APNs unreachable, or the key
    /// refused by APNs), with the one message that says why.
    private(set) var notSent = 0
    private(set) var stopReason: String?
    var total: Int { delivered + dryRuns + unregistered + invalid + notSent + failures.values.reduce(0, +) }
    var allDelivered: Bool { unregistered == 0 && invalid == 0 && notSent == 0 && failures.isEmpty }

    init(json: Bool, dryRun: Bool) {
        self.json = json
        self.dryRun = dryRun
        progress = isatty(2) == 1
    }

    mutating func record(_ device: Device, _ result: DeliveryResult) {
        if case .transportFailed(let failure) = result, failure.stopsTheSend {
            notSent += 1
            if stopReason == nil { stopReason = failure.message }
            if json { Output.writeBytes(Self.jsonLine(device.token, result)) }
            showProgress(fraction: nil)
            return
        }
        switch result {
        case .delivered: delivered += 1
        case .dryRun: dryRuns += 1
        case .unregistered: unregistered += 1
        case .failed, .transportFailed: failures[result.failureReason ?? "unknown", default: 0] += 1
        }
        if json {
            Output.writeBytes(Self.jsonLine(device.token, result))
        } else if case .dryRun = result {
        } else if case .delivered = result {
        } else {
            explain("device \(device.token): \(result.label) \(Self.detail(result))")
        }
        showProgress(fraction: nil)
    }

    /// A device whose own variables make its payload invalid: never sent, counted as failed.
    mutating func recordRejected(_ device: Device, _ error: PayloadError) {
        failures[error.stableCode, default: 0] += 1
        if json {
            var w = JSONWriter(capacity: 160)
            w.raw("{\"token\":"); w.string(device.token)
            w.raw(",\"result\":\"rejected\",\"code\":"); w.string(error.stableCode)
            w.raw(",\"message\":"); w.string(error.message)
            w.raw("}\n")
            Output.writeBytes(w.bytes)
        } else {
            explain("device \(device.token): rejected: \(error.description)")
        }
        showProgress(fraction: nil)
    }

    /// In text mode, the first problems are listed on stderr; the rest only counted.
    private var explained = 0
    static let explainedLimit = 20

    private mutating func explain(_ line: String) {
        explained += 1
        if explained <= Self.explainedLimit {
            Output.error(line)
        } else if explained == Self.explainedLimit + 1 {
            Output.error("(further problems only counted; use --json for every device)")
        }
    }

    static func detail(_ result: DeliveryResult) -> String {
        switch result {
        case .failed(let status, let reason): return "\(status) \(reason.rawValue)"
        case .unregistered(let reason, let timestamp): return "410 \(reason.rawValue) timestamp \(timestamp.map(String.init) ?? "none")"
        case .transportFailed(let failure): return failure.description
        case .delivered, .dryRun: return ""
        }
    }

    /// A line of `--devices` that is not a token: reported, counted as failed.
    mutating func recordInvalid(line: Int, problem: String, source: String) {
        invalid += 1
        if json {
            var w = JSONWriter(capacity: 128)
            w.raw("{\"line\":"); w.int(line)
            w.raw(",\"result\":\"invalid\",\"code\":"); w.string(PayloadErrorCode.invalidToken.rawValue)
            w.raw(",\"message\":"); w.string(problem)
            w.raw("}\n")
            Output.writeBytes(w.bytes)
        } else {
            explain(Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .line(line, file: source), "not a device token: \(problem)").description)
        }
    }

    /// How far through `--devices` we are (bytes read / file size), when known.
    private var fraction: Double?

    mutating func showProgress(fraction newFraction: Double?) {
        guard progress else { return }
        if let newFraction { fraction = newFraction }
        let now = clock.monotonicNanoseconds()
        guard now - lastProgress > 100_000_000 else { return }
        lastProgress = now
        var line = "\r\u{1B}[2K"
        if let fraction {
            let filled = Int(min(max(fraction, 0), 1) * 30)
            line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled) + "] "
        }
        line += "\(total) devices: \(delivered + dryRuns) \(dryRun ? "built" : "delivered"), \(total - delivered - dryRuns) not"
        Output.write(line, to: .stderr)
    }

    /// The summary: on stdout, or on stderr with `--json` so stdout stays one line per device.
    func printSummary() {
        if progress { Output.write("\r\u{1B}[2K", to: .stderr) }
        let seconds = Double(clock.monotonicNanoseconds() - started) / 1e9
        var text = dryRun ? "dry run: nothing was sent\n" : ""
        text += "devices        \(total)\n"
        if dryRun { text += "built          \(dryRuns)\n" } else { text += "delivered      \(delivered)\n" }
        text += "unregistered   \(unregistered)\n"
        if notSent > 0 { text += "not sent       \(notSent)\n" }
        text += "failed         \(failures.values.reduce(0, +) + invalid)\n"
        if invalid > 0 { text += "  " + PayloadErrorCode.invalidToken.rawValue.padding(to: 28) + "\(invalid)\n" }
        for (reason, count) in failures.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            text += "  " + reason.padding(to: 28) + "\(count)\n"
        }
        let rate = seconds > 0 ? Double(total) / seconds : 0
        text += "time           \(String(Int(seconds * 1000))) ms (\(Int(rate)) devices/s)\n"
        Output.write(text, to: json ? .stderr : .stdout)
    }

    static func jsonLine(_ token: String, _ result: DeliveryResult) -> [UInt8] {
        var w = JSONWriter(capacity: 160)
        w.raw("{\"token\":"); w.string(token)
        if case .transportFailed(let failure) = result, failure.stopsTheSend {
            w.raw(",\"result\":\"not-sent\",\"reason\":"); w.string(failure.code.rawValue)
            w.raw(",\"message\":"); w.string(failure.message)
            w.raw("}\n")
            return w.bytes
        }
        w.raw(",\"result\":"); w.string(result.label)
        switch result {
        case .delivered(let apnsId):
            w.raw(",\"apnsId\":"); w.string(apnsId)
        case .failed(let status, let reason):
            w.raw(",\"status\":"); w.int(status)
            w.raw(",\"reason\":"); w.string(reason.rawValue)
        case .unregistered(let reason, let timestamp):
            w.raw(",\"status\":410,\"reason\":"); w.string(reason.rawValue)
            w.raw(",\"timestamp\":")
            if let timestamp { w.int(Int(timestamp)) } else { w.null() }
        case .transportFailed(let failure):
            w.raw(",\"reason\":"); w.string(failure.code.rawValue)
            w.raw(",\"message\":"); w.string(failure.message)
        case .dryRun(let request):
            w.raw(",\"request\":{\"method\":"); w.string(request.method)
            w.raw(",\"url\":"); w.string(request.url)
            w.raw(",\"headers\":{")
            for (i, header) in request.headers.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(header.name); w.raw(":"); w.string(header.value)
            }
            w.raw("},\"body\":"); w.string(String(decoding: request.body, as: UTF8.self))
            w.raw("}")
        }
        w.raw("}\n")
        return w.bytes
    }
}

extension TransportFailure {
    /// Failures that are not the device's: every other device would fail the same way, so
    /// `send` ends with one message and exit 2 instead of a failure per device.
    var stopsTheSend: Bool { code == .unreachable }
}
