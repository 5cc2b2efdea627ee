import Timing

/// Decides when to stop trying something that keeps failing, and when to look again.
///
/// Closed: attempts go ahead. After `threshold` failures in a row it opens: attempts are
/// refused, and a probe (something that tests the way without spending an attempt) is due
/// once the probe backoff has passed: 1 s, doubling after each failed probe up to 30 s.
/// The first success closes it. Times are monotonic milliseconds, passed in, so tests drive
/// it without sleeping.
struct CircuitBreaker: Sendable, Equatable {
    let threshold: Int
    /// Between probes while open: doubling per failed probe, capped.
    let probeBackoff: Backoff
    private(set) var consecutiveFailures = 0
    private(set) var isOpen = false
    /// When the next probe is due (while open).
    private(set) var probeAt: UInt64 = 0
    /// Failures since it opened, the one that opened it included.
    private var failuresWhileOpen = 0

    init(threshold: Int = 3, firstProbeMilliseconds: UInt64 = 1_000, maxProbeMilliseconds: UInt64 = 30_000) {
        self.threshold = max(1, threshold)
        probeBackoff = Backoff(initial: .milliseconds(Int64(clamping: firstProbeMilliseconds)),
                               maximum: .milliseconds(Int64(clamping: maxProbeMilliseconds)))
    }

    func probeDue(now: UInt64) -> Bool { isOpen && now >= probeAt }

    /// An attempt or a probe succeeded: closed again, the count starts over.
    mutating func recordSuccess() {
        consecutiveFailures = 0
        isOpen = false
        failuresWhileOpen = 0
    }

    /// An attempt (closed) or a probe (open) failed. Returns true when this failure opened
    /// the breaker.
    @discardableResult
    mutating func recordFailure(now: UInt64) -> Bool {
        consecutiveFailures += 1
        if isOpen {
            failuresWhileOpen += 1
            scheduleProbe(now: now)
            return false
        }
        guard consecutiveFailures >= threshold else { return false }
        isOpen = true
        failuresWhileOpen = 1
        scheduleProbe(now: now)
        return true
    }

    private mutating func scheduleProbe(now: UInt64) {
        probeAt = now + UInt64(probeBackoff.delay(afterFailures: failuresWhileOpen, unit: 0).inMilliseconds)
    }
}
