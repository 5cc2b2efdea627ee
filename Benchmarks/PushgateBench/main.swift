#if canImport(Glibc)
import Glibc
#endif

// Release-mode benchmarks. Each suite prints one block with the median of several runs.
// Run with `make bench` (or `bash scripts/release-build.sh --product PushgateBench && .build/release/PushgateBench [suite…]`).
// `PushgateBench write-links FILE [COUNT]` writes the `links` suite's mixed corpus as one
// link per line, for the streaming benchmark (Benchmarks/linkcheck/run.sh).
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "write-links" {
    let count = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) : 200_000
    exit(LinkBenchmark.writeCorpus(to: CommandLine.arguments[2], count: count ?? 200_000) ? 0 : 2)
}
// `PushgateBench apns-send URL CAFILE REQUESTS BODY`: pushgate's send path alone (1 connection,
// 1 transport thread), with bare_curl's arguments and output
// (`<requests/s> <CPU µs per request> <delivered>`), to profile the two side by side.
if CommandLine.arguments.count == 6, CommandLine.arguments[1] == "apns-send", let count = Int(CommandLine.arguments[4]) {
    let a = CommandLine.arguments
    guard let m = APNsBenchmark.sendThroughTransport(url: a[2], caFile: a[3], body: a[5], requests: count) else { exit(1) }
    print(String(format: "%.0f %.1f %d", m.rate, m.cpuMicroseconds, count))
    exit(0)
}
// `PushgateBench claim-time DEVICES [POSTGRES_URL]`: a dispatcher turn's storage cost in a
// campaign of DEVICES devices (Benchmarks/durable/run.sh runs it at 100k and 10M).
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "claim-time", let devices = Int(CommandLine.arguments[2]) {
    exit(ClaimBenchmark.run(devices: devices, postgresURL: CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : nil) ? 0 : 1)
}
let requested = Set(CommandLine.arguments.dropFirst())
var ran = 0
for suite in BenchmarkSuites.all where requested.isEmpty || requested.contains(suite.name) {
    suite.run()
    ran += 1
}
if ran == 0 {
    print("no benchmark suite named \(requested.sorted()); suites: \(BenchmarkSuites.all.map(\.name))")
    exit(2)
}
