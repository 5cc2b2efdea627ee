#if canImport(Glibc)
import Glibc
#endif

struct BenchmarkSuite: Sendable {
    let name: String
    let run: @Sendable () -> Void
}

enum BenchmarkSuites {
    /// Suites register here, one line each.
    static let all: [BenchmarkSuite] = [
        BenchmarkSuite(name: "links", run: LinkBenchmark.run),
        PayloadBenchmark.suite,
        BenchmarkSuite(name: "apns", run: APNsBenchmark.run),
    ]
}

/// Monotonic nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs `body` `runs` times and returns each run's nanoseconds, sorted.
func measure(runs: Int, _ body: () -> Void) -> [UInt64] {
    var samples: [UInt64] = []
    for _ in 0..<runs {
        let start = monotonicNanoseconds()
        body()
        samples.append(monotonicNanoseconds() - start)
    }
    return samples.sorted()
}

func median<T: Comparable>(_ sorted: [T]) -> T {
    sorted[sorted.count / 2]
}

/// Keeps the optimiser from deleting work whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
