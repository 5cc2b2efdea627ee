#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import Foundation

/// `links`: canonicalisations per second on one core over a seeded mixed corpus (70%
/// valid links in many spellings, 30% hostile), route matching included. Foundation's
/// `URLComponents(string:)` runs over the same corpus as a reference point; it only
/// parses (no checks, no routing, no canonical form).
enum LinkBenchmark {
    static let linkCount = 100_000
    static let runs = 9

    static func run() {
        let routesPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/routes.json").path
        guard let data = FileManager.default.contents(atPath: routesPath) else {
            print("links: cannot read \(routesPath)")
            return
        }
        let table: RouteTable
        do { table = try RouteTable(jsonBytes: Array(data), source: routesPath) } catch {
            print("links: \(error)")
            return
        }
        var generator = SampleLinkGenerator(table: table, seed: 2026)
        let links = (0..<linkCount).map { _ in generator.next(hostileFraction: 0.3) }
        let bytes = links.reduce(0) { $0 + $1.utf8.count }

        var accepted = 0
        for link in links { if case .accepted = table.check(link) { accepted += 1 } }
        // For profiling (perf, callgrind): LINKS_CHECK_ONLY=N runs N more passes of checks only.
        if let passes = ProcessInfo.processInfo.environment["LINKS_CHECK_ONLY"].flatMap({ Int($0) }) {
            for _ in 0..<passes { for link in links { blackHole(table.check(link)) } }
            print("links: checked \((passes + 1) * linkCount) links (\(accepted) of \(linkCount) accepted)")
            return
        }

        let ours = measure(runs: runs) {
            var n = 0
            for link in links { if case .accepted = table.check(link) { n += 1 } }
            blackHole(n)
        }
        // CPU time of this thread: on a shared machine, wall time also counts the time
        // other processes held the core.
        let oursCPU = measureThreadCPU(runs: runs) {
            var n = 0
            for link in links { if case .accepted = table.check(link) { n += 1 } }
            blackHole(n)
        }
        // The two halves separately: accepted links build results, refused ones build messages.
        let valid = links.filter { if case .accepted = table.check($0) { return true } else { return false } }
        let hostile = links.filter { if case .rejected = table.check($0) { return true } else { return false } }
        let validSamples = measure(runs: runs) {
            var n = 0
            for link in valid { if case .accepted = table.check(link) { n += 1 } }
            blackHole(n)
        }
        let hostileSamples = measure(runs: runs) {
            var n = 0
            for link in hostile { if case .rejected = table.check(link) { n += 1 } }
            blackHole(n)
        }
        let foundation = measure(runs: 5) {
            var n = 0
            for link in links where URLComponents(string: link) != nil { n += 1 }
            blackHole(n)
        }
        let foundationCPU = measureThreadCPU(runs: 5) {
            var n = 0
            for link in links where URLComponents(string: link) != nil { n += 1 }
            blackHole(n)
        }
        func perLink(_ samples: [UInt64]) -> String {
            String(format: "%.0f", Double(median(samples)) / Double(linkCount))
        }
        print("links: \(linkCount) generated links (seed 2026, \(accepted) accepted = \(accepted * 100 / linkCount)%, mean \(bytes / linkCount) bytes), single core, median of \(runs) runs")
        print("  RouteTable.check            \(perLink(ours)) ns/link wall, \(perLink(oursCPU)) ns/link CPU  (min \(String(format: "%.0f", Double(ours[0]) / Double(linkCount))) ns, \(String(format: "%.2f", Double(linkCount) / (Double(median(ours)) / 1e9) / 1e6)) M links/s)")
        print("    accepted links only      \(String(format: "%.0f", Double(median(validSamples)) / Double(valid.count))) ns/link")
        print("    refused links only       \(String(format: "%.0f", Double(median(hostileSamples)) / Double(hostile.count))) ns/link")
        print("  URLComponents(string:)      \(perLink(foundation)) ns/link wall, \(perLink(foundationCPU)) ns/link CPU  (parse only; reference)")
    }
}

/// Like `measure`, in this thread's CPU nanoseconds.
private func measureThreadCPU(runs: Int, _ body: () -> Void) -> [UInt64] {
    func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
    var samples: [UInt64] = []
    for _ in 0..<runs {
        let start = now()
        body()
        samples.append(now() - start)
    }
    return samples.sorted()
}
