#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import Foundation

/// `links`: canonicalisations per second on one core over a seeded mixed corpus (70%
/// valid links in many spellings, 30% hostile), route matching and result building
/// included. Foundation's `URLComponents(string:)` runs over the same corpus as a
/// reference point; it only parses (no checks, no routing, no canonical form).
enum LinkBenchmark {
    static let linkCount = 100_000
    static let runs = 9
    static let seed: UInt64 = 2026

    static func run() {
        guard let table = loadShippedTable() else { return }
        var generator = SampleLinkGenerator(table: table, seed: seed)
        let links = (0..<linkCount).map { _ in generator.next(hostileFraction: 0.3) }
        let valid = links.filter { table.check($0).isAccepted }
        let hostile = links.filter { !table.check($0).isAccepted }

        // For profiling (perf, callgrind): LINKS_CHECK_ONLY=N runs N passes of checks only.
        if let passes = ProcessInfo.processInfo.environment["LINKS_CHECK_ONLY"].flatMap({ Int($0) }) {
            for _ in 0..<passes { for link in links { blackHole(table.check(link)) } }
            print("links: checked \(passes * linkCount) links")
            return
        }

        func checkAll(_ corpus: [String]) { var n = 0; for link in corpus where table.check(link).isAccepted { n += 1 }; blackHole(n) }
        func parseAll(_ corpus: [String]) { var n = 0; for link in corpus where URLComponents(string: link) != nil { n += 1 }; blackHole(n) }

        let wall = measure(runs: runs) { checkAll(links) }
        // This thread's CPU time: on a shared machine, wall time also counts the time
        // other processes held the core.
        let cpu = measureThreadCPU(runs: runs) { checkAll(links) }
        // The halves separately: accepted links build results, refused ones build messages.
        let validWall = measure(runs: runs) { checkAll(valid) }
        let hostileWall = measure(runs: runs) { checkAll(hostile) }
        // Typical campaign links: plain ASCII, lowercase, nothing encoded, all valid.
        var plainGenerator = SampleLinkGenerator(table: table, seed: seed, style: .plain)
        let plain = (0..<linkCount).map { _ in plainGenerator.validLink() }
        let plainCPU = measureThreadCPU(runs: runs) { checkAll(plain) }
        let foundationWall = measure(runs: 5) { parseAll(links) }
        let foundationCPU = measureThreadCPU(runs: 5) { parseAll(links) }

        let meanBytes = links.reduce(0) { $0 + $1.utf8.count } / linkCount
        let plainMeanBytes = plain.reduce(0) { $0 + $1.utf8.count } / linkCount
        print("links: \(linkCount) generated links (seed \(seed), \(valid.count) accepted = \(valid.count * 100 / linkCount)%, mean \(meanBytes) bytes), single core, median of \(runs) runs")
        print("  RouteTable.check            \(perLink(wall, linkCount)) ns/link wall, \(perLink(cpu, linkCount)) ns/link CPU  (\(String(format: "%.2f", Double(linkCount) / (Double(median(wall)) / 1e9) / 1e6)) M links/s)")
        print("    accepted links only      \(perLink(validWall, valid.count)) ns/link wall")
        print("    refused links only       \(perLink(hostileWall, hostile.count)) ns/link wall")
        print("  plain ASCII campaign links  \(perLink(plainCPU, linkCount)) ns/link CPU  (\(linkCount) valid, mean \(plainMeanBytes) bytes)")
        print("  URLComponents(string:)      \(perLink(foundationWall, linkCount)) ns/link wall, \(perLink(foundationCPU, linkCount)) ns/link CPU  (parse only; reference)")
    }

    /// The same mixed corpus as `run()` (same seed, 30% hostile), one link per line. Links
    /// whose attack is a raw CR or LF are left out: in a file they would be two lines.
    static func writeCorpus(to path: String, count: Int) -> Bool {
        guard let table = loadShippedTable() else { return false }
        var generator = SampleLinkGenerator(table: table, seed: seed)
        var text = ""
        var written = 0
        while written < count {
            let link = generator.next(hostileFraction: 0.3)
            if link.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) { continue }
            text += link
            text += "\n"
            written += 1
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            print("write-links: cannot write \(path)")
            return false
        }
        return true
    }

    /// config/routes.json of this package (found from this file, whatever the working directory).
    private static func loadShippedTable() -> RouteTable? {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/routes.json").path
        guard let data = FileManager.default.contents(atPath: path) else {
            print("links: cannot read \(path)")
            return nil
        }
        do { return try RouteTable(jsonBytes: Array(data), source: path) } catch {
            print("links: \(error)")
            return nil
        }
    }

    private static func perLink(_ samples: [UInt64], _ count: Int) -> String {
        String(format: "%.0f", Double(median(samples)) / Double(max(count, 1)))
    }
}

private extension LinkCheckResult {
    var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }
}

/// Like `monotonicNanoseconds`, but this thread's CPU time (the payload suite uses it too).
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Like `measure`, in this thread's CPU nanoseconds.
private func measureThreadCPU(runs: Int, _ body: () -> Void) -> [UInt64] {
    var samples: [UInt64] = []
    for _ in 0..<runs {
        let start = threadCPUNanoseconds()
        body()
        samples.append(threadCPUNanoseconds() - start)
    }
    return samples.sorted()
}
