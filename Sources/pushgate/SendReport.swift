import APNsCore
import APNs
import Payloads
import Storage
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
    /// The APNs environment the answers come from (each `--json` line with an answer names it).
    let environment: String
    private let progress: Bool
    private var lastProgress: UInt64 = 0
    private let clock = processClock
    private let started = processClock.monotonicNanoseconds()

    private(set) var delivered = 0
    private(set) var dryRuns = 0
    private(set) var unregistered = 0
    private(set) var invalid = 0
    private(set) var failures: [String: Int] = [:]
    /// Devices not sent because the whole send stopped (APNs unreachable, or the signing
    /// key refused or paused by APNs), with the one message that says why.
    private(set) var notSent = 0
    private(set) var stopReason: String?
    /// Why the devices file could not be read to its end: the send stops there.
    private(set) var readFailure: String?
    var total: Int { delivered + dryRuns + unregistered + invalid + notSent + failures.values.reduce(0, +) }
    var allDelivered: Bool { unregistered == 0 && invalid == 0 && notSent == 0 && failures.isEmpty }

    init(json: Bool, dryRun: Bool, environment: String) {
        self.json = json
        self.dryRun = dryRun
        self.environment = environment
        progress = isatty(2) == 1
    }

    /// The send stopped before every device: why (the first reason is kept).
    mutating func stop(_ reason: String) {
        if stopReason == nil { stopReason = reason }
    }

    /// A device with an answer (or its last attempt's failure).
    mutating func record(_ device: Device, _ result: DeliveryResult) {
        switch result {
        case .delivered: delivered += 1
        case .dryRun: dryRuns += 1
        case .unregistered: unregistered += 1
        case .failed, .transportFailed: failures[result.failureReason ?? "unknown", default: 0] += 1
        }
        if json {
            Output.writeBytes(Self.jsonLine(device.token, result, environment: environment))
        } else if case .dryRun = result {
        } else if case .delivered = result {
        } else {
            explain("device \(device.token): \(result.label) \(Self.detail(result))")
        }
        showProgress(fraction: nil)
    }

    /// One device's result as the send's outbox recorded it. `notSent`: why a device not
    /// answered yet was not sent (the send stopped or was interrupted); `dryRun`: a dry run's
    /// request, built again.
    mutating func record(_ row: DeliveryResultRow, notSent: TransportFailure, dryRun: (DeliveryResultRow) -> DeliveryResult?) {
        let device = Device(token: row.token)
        switch row.state {
        case .delivered:
            record(device, .delivered(apnsId: row.apnsID ?? "", uniqueId: row.apnsUniqueID))
        case .unregistered:
            record(device, .unregistered(reason: APNsReason(row.reason ?? "Unregistered"), timestampMilliseconds: row.timestampMilliseconds))
        case .dryRun:
            record(device, dryRun(row) ?? .transportFailed(TransportFailure(.transportError, "the dry run's request cannot be built again")))
        case .failed:
            if let status = row.status {
                record(device, .failed(status: status, reason: APNsReason(row.reason ?? ""), retryAfterSeconds: nil))
            } else if let code = row.reason.flatMap(TransportFailure.Code.init(rawValue:)) {
                record(device, .transportFailed(TransportFailure(code, "no answer from APNs after every attempt")))
            } else {
                recordRejected(device, code: row.reason ?? "failed", message: "this device's request could not be built")
            }
        case .pending, .inFlight, .retrying:
            recordNotSent(device, notSent)
        case .skipped, .cancelled, .expired:
            failures[row.state.name, default: 0] += 1
            if json {
                var w = JSONWriter(capacity: 120)
                w.object { w in
                    w.member("token", device.token)
                    w.member("result", row.state.name)
                }
                w.raw("\n")
                Output.writeBytes(w.bytes)
            } else {
                explain("device \(device.token): \(row.state.name)")
            }
        }
    }

    /// A device the send did not get to: counted apart, its line says why.
    private mutating func recordNotSent(_ device: Device, _ why: TransportFailure) {
        notSent += 1
        if json { Output.writeBytes(Self.jsonLine(device.token, .transportFailed(why), environment: environment, notSent: true)) }
    }

    /// Devices answered as they should be, counted without a line each (the text report).
    mutating func countAnswered(delivered: Int, dryRuns: Int) {
        self.delivered += delivered
        self.dryRuns += dryRuns
    }

    /// A device whose own variables make its payload invalid: never sent, counted as failed.
    mutating func recordRejected(_ device: Device, code: String, message: String) {
        failures[code, default: 0] += 1
        if json {
            var w = JSONWriter(capacity: 160)
            w.object { w in
                w.member("token", device.token)
                w.member("result", "rejected")
                w.member("code", code)
                w.member("message", message)
            }
            w.raw("\n")
            Output.writeBytes(w.bytes)
        } else {
            explain("device \(device.token): rejected: \(message) [\(code)]")
        }
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
        case .failed(let status, let reason, _): return "\(status) \(reason.rawValue)"
        case .unregistered(let reason, let timestamp): return "410 \(reason.rawValue) timestamp \(timestamp.map(String.init) ?? "none")"
        case .transportFailed(let failure): return failure.description
        case .delivered, .dryRun: return ""
        }
    }

    /// A line of `--devices` that is not a token: reported, counted as failed.
    mutating func recordReadFailure(_ message: String) {
        if readFailure == nil { readFailure = message }
    }

    mutating func recordInvalid(line: Int, problem: String, source: String) {
        invalid += 1
        if json {
            var w = JSONWriter(capacity: 128)
            w.object { w in
                w.member("line", line)
                w.member("result", "invalid")
                w.member("code", PayloadErrorCode.invalidToken.rawValue)
                w.member("message", problem)
            }
            w.raw("\n")
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

    static func jsonLine(_ token: String, _ result: DeliveryResult, environment: String, notSent: Bool = false) -> [UInt8] {
        var w = JSONWriter(capacity: 160)
        w.object { w in
            w.member("token", token)
            if notSent, case .transportFailed(let failure) = result {
                w.member("result", "not-sent")
                w.member("reason", failure.code.rawValue)
                w.member("message", failure.message)
                return
            }
            w.member("result", result.label)
            switch result {
            case .delivered(let apnsId, let uniqueId):
                w.member("apnsId", apnsId)
                if let uniqueId { w.member("apnsUniqueId", uniqueId) }
                w.member("environment", environment)
            case .failed(let status, let reason, _):
                w.member("status", status)
                w.member("reason", reason.rawValue)
                w.member("environment", environment)
            case .unregistered(let reason, let timestamp):
                w.member("status", 410)
                w.member("reason", reason.rawValue)
                w.member("timestamp", orNull: timestamp.map { Int($0) })
                w.member("environment", environment)
            case .transportFailed(let failure):
                w.member("reason", failure.code.rawValue)
                w.member("message", failure.message)
            case .dryRun(let request):
                w.member("request", object: { w in
                    w.member("method", request.method)
                    w.member("url", request.url)
                    w.member("headers", object: { w in
                        for header in request.headers {
                            w.key(header.name)
                            w.string(header.value)
                        }
                    })
                    w.member("body", String(decoding: request.body, as: UTF8.self))
                })
            }
        }
        w.raw("\n")
        return w.bytes
    }
}
