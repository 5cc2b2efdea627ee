import APNsCore
import APNs
import Foundation
import Payloads
import Synchronization
import Crypto
import CurlClient
import Timing

/// `apns`: the libcurl transport against a local h2o sink, next to h2load's rate and a
/// bare libcurl program's against the same sink in the same run (1 connection, 100
/// concurrent streams, 100,000 requests), then with more connections and transport threads.
enum APNsBenchmark {
    static let requests = Int(ProcessInfo.processInfo.environment["PUSHGATE_BENCH_APNS_REQUESTS"] ?? "") ?? 100_000
    static let runs = Int(ProcessInfo.processInfo.environment["PUSHGATE_BENCH_APNS_RUNS"] ?? "") ?? 5

    /// Transport shapes measured besides the one compared with the bare program:
    /// (connections, transport threads).
    static let shapes = [(1, 1), (2, 1), (2, 2), (4, 2)]

    static func run() {
        guard let sink = try? H2OSink.start() else {
            print("apns: could not start h2o (Debian packages h2o, nghttp2-client, openssl needed); skipped")
            return
        }
        defer { sink.stop() }
        CPUPinning.client?.pinThisProcess()
        let body = #"{"aps":{"alert":{"title":"Summer sale","body":"Up to 40% off everything in the app."},"badge":1},"deeplink":"https://example.com/product/1042"}"#
        let h2loadRates = (0..<runs).compactMap { _ in sink.h2load(requests: requests, body: body) }.sorted()
        let program = BareCurl.build()
        // Runs alternate between the programs, so that a change in the machine's load
        // meets each of them alike.
        var bare: [Int: [Measurement]] = [:]
        var ours: [String: [Measurement]] = [:]
        var paired: [(rate: Double, cpu: Double)] = []
        for _ in 0..<runs {
            for threads in [1, 2] {
                if let m = program?.run(sink: sink, requests: requests, body: body, threads: threads) { bare[threads, default: []].append(m) }
                // Right after the bare program, in a process of its own as the bare program is.
                if threads == 1, let m = sendInOwnProcess(sink: sink, requests: requests, body: body) {
                    ours["process", default: []].append(m)
                }
            }
            for (connections, threads) in shapes {
                if let m = sendThroughTransport(sink: sink, body: body, connections: connections, threads: threads) {
                    ours["\(connections)x\(threads)", default: []].append(m)
                }
            }
            if let b = bare[1]?.last, let p = ours["process"]?.last {
                // Each run's pair was measured a few seconds apart: its ratio is what a change
                // in the machine's load moves least.
                paired.append((p.rate / b.rate, p.cpuMicroseconds / b.cpuMicroseconds))
                print("  run \(paired.count): bare \(b), pushgate \(p): \(String(format: "%.0f", p.rate / b.rate * 100))%, "
                    + "\(String(format: "%.2f", p.cpuMicroseconds / b.cpuMicroseconds))×")
            }
        }
        let overhead = (0..<runs).compactMap { _ in clientOverhead(body: body)?.cpuMicroseconds }.sorted()
        guard !h2loadRates.isEmpty, let single = ours["process"].map(Measurement.median), let inProcess = ours["1x1"].map(Measurement.median) else {
            print("apns: a run failed (h2load \(h2loadRates.count)/\(runs), transport \(ours["process"]?.count ?? 0)/\(runs))")
            return
        }
        let h2load = h2loadRates[h2loadRates.count / 2]
        var lines = "  bare libcurl multi     (could not build or run Benchmarks/bare-curl/bare_curl.c with cc -lcurl)"
        if let one = bare[1].map(Measurement.median), !paired.isEmpty {
            lines = """
              bare libcurl multi     \(one) (Benchmarks/bare-curl/bare_curl.c)
              pushgate vs bare       \(String(format: "%.0f", median(paired.map(\.rate).sorted()) * 100))% of its rate, \(String(format: "%.2f", median(paired.map(\.cpu).sorted())))× its CPU per request (medians of the runs' ratios)
            """
            if let two = bare[2].map(Measurement.median) {
                lines += "\n  bare, 2 threads        \(two) (2 multi handles, 1 connection each)"
            }
        }
        for (connections, threads) in shapes.dropFirst() {
            guard let m = ours["\(connections)x\(threads)"].map(Measurement.median) else { continue }
            lines += "\n  pushgate \(connections) conn × \(threads) thr  \(m)"
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let pinning = CPUPinning.enabled ? "; pinned: the sink on CPU 1, every client on CPU 0" : ""
        print("""
        apns (TLS, 100 streams per connection, \(requests) requests, median of \(runs); the sink is one h2o thread\(pinning))
          h2load -c1 -m100       \(Int(h2load)) req/s
          pushgate transport     \(single) (1 connection, 1 transport thread; `apns-send`, a process per run)
          the same, in process   \(inProcess) (in this long-running process, after the transports of the rounds before)
        \(lines)
          ratio                  \(String(format: "%.0f", single.rate / h2load * 100))% of h2load
          Swift side alone       \(String(format: "%.1f", overhead.isEmpty ? 0 : overhead[overhead.count / 2])) µs CPU/request (instant transport, no libcurl)
          peak RSS               \(usage.ru_maxrss / 1024) MB (whole benchmark process)
        """)
    }

    /// One run's rate and process CPU per request.
    struct Measurement: CustomStringConvertible {
        var rate: Double
        var cpuMicroseconds: Double

        /// The median rate and the median CPU per request, each on its own.
        static func median(_ runs: [Measurement]) -> Measurement {
            let rates = runs.map(\.rate).sorted(), cpu = runs.map(\.cpuMicroseconds).sorted()
            return Measurement(rate: rates[rates.count / 2], cpuMicroseconds: cpu[cpu.count / 2])
        }

        /// CPU seconds per second of wall time: near 1.0 (pinned) means this side was the bottleneck.
        var coresUsed: Double { rate * cpuMicroseconds / 1e6 }

        var description: String {
            "\(Int(rate)) req/s (\(String(format: "%.1f", cpuMicroseconds)) µs CPU/request, \(String(format: "%.2f", coresUsed)) cores)"
        }
    }

    /// Sends `requests` notifications through APNsClient + CurlHTTP2Transport, with twice
    /// what the transport holds in flight.
    static func sendThroughTransport(sink: H2OSink, body: String, connections: Int, threads: Int) -> Measurement? {
        sendThroughTransport(url: sink.url, caFile: sink.caFile, body: body, requests: requests, connections: connections,
                             threads: threads)
    }

    static func sendThroughTransport(url: String, caFile: String, body: String, requests: Int, connections: Int = 1,
                                     threads: Int = 1) -> Measurement? {
        guard let transport = try? CurlHTTP2Transport(settings: TransportSettings(baseURL: url, caFile: caFile,
                                                                                   connections: connections, maxConcurrentStreams: 100,
                                                                                   threads: threads), clock: SystemClock()) else { return nil }
        defer { transport.shutdown() }
        return send(through: transport, body: body, inFlight: 200 * connections, requests: requests)
    }

    /// pushgate's send path (1 connection, 1 transport thread) in a process of its own, `PushgateBench apns-send`, started and measured as the bare
    /// program is: a fresh process per run, as `pushgate send` is one per campaign.
    static func sendInOwnProcess(sink: H2OSink, requests: Int, body: String) -> Measurement? {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return BareCurl.measure(me, ["apns-send", sink.url, sink.caFile, String(requests), body])
    }

    /// The same load through a transport that answers 200 at once (in a task per request,
    /// `HTTPTransport`'s default): what the Swift side costs without libcurl or the network.
    static func clientOverhead(body: String) -> Measurement? {
        send(through: InstantTransport(), body: body, inFlight: 200, requests: requests)
    }

    static func send(through transport: any HTTPTransport, body: String, inFlight: Int, requests count: Int) -> Measurement? {
        guard let key = try? SigningKey.ephemeral() else { return nil }
        let client = APNsClient(transport: transport, tokens: ProviderTokenManager(key: key, teamId: "TEAM123456", keyId: "KEY1234567", clock: SystemClock()),
                                retry: RetryPolicy(), clock: SystemClock())
        let requests = (0..<1000).map { i -> APNsRequest in
            let hex = String(i, radix: 16)
            let token = String(repeating: "0", count: 64 - hex.count) + hex
            return APNsRequest(deviceToken: token, path: "/3/device/" + token, pushType: .alert, topic: "com.example.shop",
                               priority: 10, body: Array(body.utf8))
        }
        let cpuBefore = cpuMicroseconds()
        let start = monotonicNanoseconds()
        // As the dispatcher sends (`send(_:awaitingOn:then:)`, no task per request):
        // `inFlight` requests out at once, each answer's callback sending the next.
        let progress = SendProgress(count: count)
        @Sendable func sendNext() {
            let index = progress.next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < count else { return }
            client.send(requests[index % requests.count], awaitingOn: globalConcurrentExecutor) { result in
                progress.answered(delivered: result.isDelivered)
                sendNext()
            }
        }
        for _ in 0..<inFlight { sendNext() }
        progress.done.wait()
        let delivered = progress.delivered.load(ordering: .relaxed)
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = Double(cpuMicroseconds() - cpuBefore) / Double(count)
        guard delivered == count else {
            print("apns: only \(delivered) of \(count) delivered")
            return nil
        }
        return Measurement(rate: Double(count) / seconds, cpuMicroseconds: cpu)
    }

    static func cpuMicroseconds() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}

/// The benchmark's requests: which is next, how many were answered and delivered.
private final class SendProgress: Sendable {
    let next = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    private let answers = Atomic<Int>(0)
    private let count: Int
    /// Signalled at the last answer.
    let done = DispatchSemaphore(value: 0)

    init(count: Int) { self.count = count }

    func answered(delivered isDelivered: Bool) {
        if isDelivered { delivered.add(1, ordering: .relaxed) }
        if answers.add(1, ordering: .relaxed).newValue == count { done.signal() }
    }
}

extension DeliveryResult {
    fileprivate var isDelivered: Bool { if case .delivered = self { true } else { false } }
}

/// Answers every request with 200 immediately.
struct InstantTransport: HTTPTransport {
    func send(_ request: TransportRequest) async -> TransportOutcome {
        .response(TransportResponse(status: 200, apnsId: "8f0c2a4e-3b1d-4c5e-9f6a-7b8c9d0e1f2a"))
    }
}

/// Benchmarks/bare-curl/bare_curl.c: libcurl's multi interface driven like pushgate's
/// transport with nothing else, built here with the system's `cc` and libcurl.
struct BareCurl {
    let executable: String

    static func build() -> BareCurl? {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("bare-curl/bare_curl.c").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-bare-curl-\(getpid())").path
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O2", "-o", output, source, "-lcurl", "-lpthread"]
        guard (try? cc.run()) != nil else { return nil }
        cc.waitUntilExit()
        return cc.terminationStatus == 0 ? BareCurl(executable: output) : nil
    }

    func run(sink: H2OSink, requests: Int, body: String, threads: Int) -> APNsBenchmark.Measurement? {
        Self.measure(executable, [sink.url, sink.caFile, String(requests), body, String(threads)])
    }

    /// Runs a program that prints `<requests/s> <CPU µs per request> <delivered>`.
    static func measure(_ executable: String, _ arguments: [String]) -> APNsBenchmark.Measurement? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        CPUPinning.client?.apply(to: process)
        let out = Pipe()
        process.standardOutput = out
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard process.terminationStatus == 0, fields.count == 3 else { return nil }
        return APNsBenchmark.Measurement(rate: fields[0], cpuMicroseconds: fields[1])
    }
}
