import HTTPServer
import OSThreads
import StrictJSON
import Synchronization
import Timing

/// Runs the readiness checks and samples the metrics' observed gauges on a thread of its
/// own, every `interval`, so `/readyz` and `/metrics` answer on the I/O thread from the
/// last results. A check may take a lock that long work holds (storage, the signing
/// key's state while a token is minted and stored); then only this thread waits, and
/// probes keep answering the last results. The first results exist before `init`
/// returns. The thread ends when the monitor is released.
public final class ReadinessMonitor: Sendable {
    /// The answer `/readyz` gives: 200 with every check `ok` (or not blocking), else 503.
    public struct Answer: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// Seconds between two rounds of checks.
    public static let defaultInterval = 0.1

    private let core: Core
    /// False only if the thread could not be started: then each answer is computed when asked.
    private let threaded: Bool

    public init(checks: [ReadinessCheck], metrics: Metrics, interval: Double = ReadinessMonitor.defaultInterval) {
        core = Core(checks: checks, metrics: metrics, interval: interval)
        core.evaluate()
        let core = core
        threaded = DetachedThread.start(name: "pg-readiness") { core.run() }
    }

    deinit { core.stop() }

    /// Ends the thread; `latest` keeps the last round's answer.
    public func stop() { core.stop() }

    /// The last round's answer.
    public var latest: Answer {
        if !threaded { core.evaluate() }
        return core.latest.withLock { $0 }
    }

    /// Rounds done so far (tests wait on it).
    public var rounds: Int { core.rounds.load(ordering: .relaxed) }

    private final class Core: Sendable {
        let checks: [ReadinessCheck]
        let metrics: Metrics
        let interval: Double
        let latest = Mutex(Answer(status: 503, body: []))
        let rounds = Atomic<Int>(0)
        private let stopped = Atomic<Bool>(false)
        private let wake = Wakeup()

        init(checks: [ReadinessCheck], metrics: Metrics, interval: Double) {
            self.checks = checks
            self.metrics = metrics
            self.interval = max(0.001, interval)
        }

        func run() {
            while !stopped.load(ordering: .acquiring) {
                wake.wait(for: .seconds(interval))
                if stopped.load(ordering: .acquiring) { return }
                evaluate()
            }
        }

        func stop() {
            stopped.store(true, ordering: .releasing)
            wake.signal()
        }

        func evaluate() {
            metrics.sampleObservedGauges()
            var ready = true
            var w = JSONWriter()
            w.object { w in
                w.member("checks", object: { w in
                    for check in checks {
                        w.key(check.name)
                        if let problem = check.check() {
                            if check.blocking { ready = false }
                            w.string(problem)
                        } else {
                            w.string("ok")
                        }
                    }
                })
                w.member("status", ready ? "ready" : "not ready")
            }
            w.raw("\n")
            let answer = Answer(status: ready ? 200 : 503, body: w.bytes)
            latest.withLock { $0 = answer }
            rounds.add(1, ordering: .relaxed)
        }
    }
}

extension ReadinessMonitor: Service {
    public var name: String { "readiness" }

    /// Checks run from `init`; this waits until cancelled, then ends the thread.
    public func run() async throws {
        await Completion().wait()
        stop()
    }
}
