/// Decides when to stop trying something that keeps failing, and when to try again.
///
/// Closed: every attempt goes ahead. After `threshold` failures in a row it opens: attempts
/// are refused, except one probe at a time once the probe backoff has passed (1 s, doubling
/// to 30 s). The first success closes it. Times are monotonic milliseconds, passed in, so
/// tests drive it without sleeping.
struct CircuitBreaker: Sendable, Equatable {
    let threshold: Int
    let firstProbeMilliseconds: UInt64
    let maxProbeMilliseconds: UInt64
    private(set) var consecutiveFailures = 0
    private(set) var isOpen = false
    private(set) var probeAt: UInt64 = 0
    private var probeDelay: UInt64 = 0
    private(set) var probing = false

    init(threshold: Int = 3, firstProbeMilliseconds: UInt64 = 1_000, maxProbeMilliseconds: UInt64 = 30_000) {
        self.threshold = max(1, threshold)
        self.firstProbeMilliseconds = firstProbeMilliseconds
        self.maxProbeMilliseconds = maxProbeMilliseconds
    }

    /// Whether an attempt may go ahead now. While open, `true` at most once per probe
    /// window, and that attempt is the probe (its outcome must be reported).
    mutating func allowAttempt(now: UInt64) -> Bool {
        guard isOpen else { return true }
        guard !probing, now >= probeAt else { return false }
        probing = true
        return true
    }

    /// An attempt succeeded: closed again, the count starts over.
    mutating func recordSuccess() {
        consecutiveFailures = 0
        isOpen = false
        probing = false
        probeDelay = 0
    }

    /// An attempt failed. Returns true when this failure opened the breaker.
    @discardableResult
    mutating func recordFailure(now: UInt64) -> Bool {
        consecutiveFailures += 1
        if isOpen {
            probing = false
            probeDelay = min(maxProbeMilliseconds, max(firstProbeMilliseconds, probeDelay * 2))
            probeAt = now + probeDelay
            return false
        }
        guard consecutiveFailures >= threshold else { return false }
        isOpen = true
        probing = false
        probeDelay = firstProbeMilliseconds
        probeAt = now + probeDelay
        return true
    }
}
