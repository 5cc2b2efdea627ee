#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
import TestSupport
@testable import Gateway

/// A check that answers `ok` once, then blocks each round until released (as a check
/// waiting for a storage lock held by long work would), then answers `problem`.
final class BlockingCheck: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private let released = Atomic<Bool>(false)
    let calls = Atomic<Int>(0)
    let problem = Mutex<String?>(nil)

    func check() -> String? {
        if calls.add(1, ordering: .relaxed).newValue > 1 && !released.load(ordering: .relaxed) {
            _ = gate.wait(timeout: .now() + 30)
        }
        return problem.withLock { $0 }
    }

    func release() {
        released.store(true, ordering: .relaxed)
        gate.signal()
    }
}

@Suite struct ReadinessMonitorTests {
    @Test func probesAnswerWhileACheckIsBlocked() throws {
        let blocking = BlockingCheck()
        let gateway = try LiveGateway(readiness: [ReadinessCheck(name: "storage") { blocking.check() }])
        #expect(eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { blocking.calls.load(ordering: .relaxed) >= 2 },
                "the monitor never ran a second round")
        // The monitor is stuck in the check: every probe still answers, from the last round.
        for _ in 0..<3 {
            let ready = gateway.request("GET", "/readyz")
            #expect(ready?.status == 200)
            #expect(try gateway.object(ready)["checks"]?.objectValue?["storage"] == .string("ok"))
            #expect(gateway.request("GET", "/metrics")?.status == 200)
            #expect(gateway.request("GET", "/healthz")?.status == 200)
        }
        blocking.problem.withLock { $0 = "not writable" }
        blocking.release()
        // The next rounds see the change.
        #expect(eventuallyBlocking(timeout: .seconds(2)) { gateway.request("GET", "/readyz")?.status == 503 })
    }

    @Test func metricsReadTheSampledGaugesNotTheirSources() {
        let metrics = Metrics()
        let value = Mutex<Double>(30)
        let asked = Atomic<Int>(0)
        metrics.observeSendingPause {
            asked.add(1, ordering: .relaxed)
            return value.withLock { $0 }
        }
        #expect(metrics.render().contains("\npushgate_apns_sending_paused_seconds 30\n"))
        value.withLock { $0 = 0 }
        let before = asked.load(ordering: .relaxed)
        #expect(metrics.render().contains("\npushgate_apns_sending_paused_seconds 30\n"))
        #expect(asked.load(ordering: .relaxed) == before, "a scrape asked the source")
        let monitor = ReadinessMonitor(checks: [], metrics: metrics, interval: 0.01)
        #expect(eventuallyBlocking(timeout: .seconds(2)) { metrics.render().contains("\npushgate_apns_sending_paused_seconds 0\n") })
        #expect(monitor.rounds >= 1)
    }
}
