import APNs
import Foundation
import Payloads

/// `apns`: the libcurl transport against a local h2o sink, next to h2load's rate against
/// the same sink in the same run (1 connection, 100 concurrent streams, 100,000 requests).
enum APNsBenchmark {
    static let requests = Int(ProcessInfo.processInfo.environment["PUSHGATE_BENCH_APNS_REQUESTS"] ?? "") ?? 100_000
    static let runs = 3

    static func run() {
        guard let sink = try? H2OSink.start() else {
            print("apns: could not start h2o (Debian packages h2o, nghttp2-client, openssl needed); skipped")
            return
        }
        defer { sink.stop() }
        let body = #"{"aps":{"alert":{"title":"Summer sale","body":"Up to 40% off everything in the app."},"badge":1},"deeplink":"https://example.com/product/1042"}"#
        let h2loadRates = (0..<runs).compactMap { _ in sink.h2load(requests: requests, body: body) }.sorted()
        let bare = BareCurl.build().map { program in (0..<runs).compactMap { _ in program.run(sink: sink, requests: requests, body: body) } } ?? []
        let bareRate = bare.map(\.rate).sorted(), bareCPU = bare.map(\.cpuMicroseconds).sorted()
        var rates: [Double] = []
        var cpuPerRequest: [Double] = []
        for _ in 0..<runs {
            guard let (rate, cpu) = sendThroughTransport(sink: sink, body: body) else { continue }
            rates.append(rate)
            cpuPerRequest.append(cpu)
        }
        rates.sort()
        cpuPerRequest.sort()
        let overhead = (0..<runs).compactMap { _ in clientOverhead(body: body)?.1 }.sorted()
        guard !h2loadRates.isEmpty, !rates.isEmpty else {
            print("apns: a run failed (h2load \(h2loadRates.count)/\(runs), transport \(rates.count)/\(runs))")
            return
        }
        let h2load = h2loadRates[h2loadRates.count / 2]
        let ours = rates[rates.count / 2]
        let ourCPU = cpuPerRequest[cpuPerRequest.count / 2]
        var bareLines = "  bare libcurl multi     (could not build or run Benchmarks/bare-curl/bare_curl.c with cc -lcurl)"
        if !bareRate.isEmpty {
            let rate = bareRate[bareRate.count / 2], cpu = bareCPU[bareCPU.count / 2]
            bareLines = """
              bare libcurl multi     \(Int(rate)) req/s (\(String(format: "%.1f", cpu)) µs CPU/request; Benchmarks/bare-curl/bare_curl.c)
              pushgate vs bare       \(String(format: "%.0f", ours / rate * 100))% of its rate, \(String(format: "%.2f", ourCPU / cpu))× its CPU per request
            """
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print("""
        apns (TLS, 1 connection, 100 streams, \(requests) requests, median of \(runs))
          h2load -c1 -m100       \(Int(h2load)) req/s
          pushgate transport     \(Int(ours)) req/s (\(String(format: "%.1f", ourCPU)) µs CPU/request)
        \(bareLines)
          ratio                  \(String(format: "%.0f", ours / h2load * 100))% of h2load
          Swift side alone       \(String(format: "%.1f", overhead.isEmpty ? 0 : overhead[overhead.count / 2])) µs CPU/request (instant transport, no libcurl)
          peak RSS               \(usage.ru_maxrss / 1024) MB (whole benchmark process)
        """)
    }

    /// Sends `requests` notifications through APNsClient + CurlHTTP2Transport, 200 in flight.
    /// Returns requests per second and process CPU microseconds per request.
    static func sendThroughTransport(sink: H2OSink, body: String) -> (Double, Double)? {
        guard let transport = try? CurlHTTP2Transport(settings: TransportSettings(baseURL: sink.url, caFile: sink.caFile,
                                                                                   connections: 1, maxConcurrentStreams: 100)) else { return nil }
        defer { transport.shutdown() }
        return send(through: transport, body: body)
    }

    /// The same load through a transport that answers 200 at once: what the Swift side
    /// (client, tasks, continuations) costs without libcurl or the network.
    static func clientOverhead(body: String) -> (Double, Double)? {
        send(through: InstantTransport(), body: body)
    }

    static func send(through transport: any HTTPTransport, body: String) -> (Double, Double)? {
        guard let key = try? SigningKey.ephemeral() else { return nil }
        let client = APNsClient(transport: transport, tokens: ProviderTokenManager(key: key, teamId: "TEAM123456", keyId: "KEY1234567"),
                                retry: RetryPolicy())
        let requests = (0..<1000).map { i -> APNsRequest in
            let hex = String(i, radix: 16)
            let token = String(repeating: "0", count: 64 - hex.count) + hex
            return APNsRequest(deviceToken: token, path: "/3/device/" + token,
                               headers: [HTTPHeader("apns-push-type", "alert"), HTTPHeader("apns-topic", "com.example.shop"),
                                         HTTPHeader("apns-priority", "10")], body: Array(body.utf8))
        }
        let cpuBefore = cpuMicroseconds()
        let start = monotonicNanoseconds()
        let delivered = blockingRun {
            await withTaskGroup(of: Bool.self) { group in
                var next = 0
                var ok = 0
                for _ in 0..<200 {
                    let request = requests[next % requests.count]
                    group.addTask { if case .delivered = await client.send(request) { true } else { false } }
                    next += 1
                }
                while let result = await group.next() {
                    if result { ok += 1 }
                    if next < Self.requests {
                        let request = requests[next % requests.count]
                        group.addTask { if case .delivered = await client.send(request) { true } else { false } }
                        next += 1
                    }
                }
                return ok
            }
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = Double(cpuMicroseconds() - cpuBefore) / Double(Self.requests)
        guard delivered == Self.requests else {
            print("apns: only \(delivered) of \(Self.requests) delivered")
            return nil
        }
        return (Double(Self.requests) / seconds, cpu)
    }

    static func cpuMicroseconds() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}

/// Waits for async work from the synchronous benchmark harness.
func blockingRun<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
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
        cc.arguments = ["cc", "-O2", "-o", output, source, "-lcurl"]
        guard (try? cc.run()) != nil else { return nil }
        cc.waitUntilExit()
        return cc.terminationStatus == 0 ? BareCurl(executable: output) : nil
    }

    func run(sink: H2OSink, requests: Int, body: String) -> (rate: Double, cpuMicroseconds: Double)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [sink.url, sink.caFile, String(requests), body]
        let out = Pipe()
        process.standardOutput = out
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard process.terminationStatus == 0, fields.count == 3 else { return nil }
        return (fields[0], fields[1])
    }
}
