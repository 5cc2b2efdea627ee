#if canImport(Glibc)
import Glibc
#endif

// Release-mode benchmarks. Each suite prints one block with the median of several runs.
// Run with `make bench` (or `swift run -c release PushgateBench [suite…]`).
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
