/// Decides when to stop trying something that keeps failing, and when to look again.
///
/// Closed: attempts go ahead. After `threshold` failures in a row it opens: attempts are
/// refused, and a probe (something that tests the way without spending an attempt) is due
/// once the probe backoff has passed: 1 s, doubling after each failed probe up to 30 s.
/// The first success closes it. Times are monotonic milliseconds, passed in, so tests drive
/// it without sleeping.
struct CircuitBreaker: Sendable, Equatable {
    let threshold: Int
    let firstProbeMilliseconds: UInt64
    let maxProbeMilliseconds: UInt64
    private(set) var consecutiveFailures = 0
    private(set) var isOpen = false
    /// When the next probe is due (while open).
    private(set) var probeAt: UInt64 = 0
    private var probeDelay: UInt64 = 0

    init(threshold: Int = 3, firstProbeMilliseconds: UInt64 = 1_000, maxProbeMilliseconds: UInt64 = 30_000) {
        self.threshold = max(1, threshold)
        self.firstProbeMilliseconds = firstProbeMilliseconds
        self.maxProbeMilliseconds = maxProbeMilliseconds
    }

    func probeDue(now: UInt64) -> Bool { isOpen && now >= probeAt }

    /// An attempt or a probe succeeded: closed again, the count starts over.
    mutating func recordSuccess() {
        consecutiveFailures = 0
        isOpen = false
        probeDelay = 0
    }

    /// An attempt (closed) or a probe (open) failed. Returns true when this failure opened
    /// the breaker.
    @discardableResult
    mutating func recordFailure(now: UInt64) -> Bool {
        consecutiveFailures += 1
        if isOpen {
            probeDelay = min(maxProbeMilliseconds, max(firstProbeMilliseconds, probeDelay * 2))
            probeAt = now + probeDelay
            return false
        }
        guard consecutiveFailures >= threshold else { return false }
        isOpen = true
        probeDelay = firstProbeMilliseconds
        probeAt = now + probeDelay
        return true
    }
}
