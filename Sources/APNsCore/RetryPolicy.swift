import Timing

/// When to send again after a transient APNs answer (429 TooManyRequests, 500, 503).
/// Exponential backoff with full jitter, never sooner than `Retry-After` says.
public struct RetryPolicy: Sendable, Equatable {
    /// Total attempts per notification, the first included.
    public var maxAttempts: Int
    public var baseBackoffMilliseconds: Int
    public var maxBackoffMilliseconds: Int

    public init(maxAttempts: Int = 3, baseBackoffMilliseconds: Int = 200, maxBackoffMilliseconds: Int = 5_000) {
        self.maxAttempts = maxAttempts
        self.baseBackoffMilliseconds = baseBackoffMilliseconds
        self.maxBackoffMilliseconds = maxBackoffMilliseconds
    }

    /// One request per attempt: what the outbox's sender uses, since the outbox
    /// (`Dispatcher`) owns retries — it records each attempt and schedules the next with its
    /// own backoff, so a device's requests are counted in one place (docs/outbox.md).
    public static let outboxAttempt = RetryPolicy(maxAttempts: 1)

    /// Whether an answer is worth another attempt. Everything else (4xx) is final.
    public func isRetryable(status: Int, reason: APNsReason) -> Bool {
        switch status {
        case 500, 503: return true
        case 429: return reason == .tooManyRequests  // TooManyProviderTokenUpdates: retrying makes it worse
        default: return false
        }
    }

    /// The backoff between attempts: the window doubles each attempt, half of it fixed and
    /// half jitter, so retries always back off yet never synchronise.
    public var backoff: Backoff {
        Backoff(initial: .milliseconds(baseBackoffMilliseconds), maximum: .milliseconds(maxBackoffMilliseconds), jitter: 0.5)
    }

    /// Delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed.
    /// `unit` is a random number in [0, 1): the jitter, injected so tests are exact.
    /// `Retry-After` is a floor.
    public func delayMilliseconds(afterAttempt attempt: Int, retryAfterSeconds: Int?, unit: Double) -> Int {
        let jittered = Int(backoff.delay(afterFailures: attempt, unit: unit).inMilliseconds)
        let floor = (retryAfterSeconds ?? 0) * 1000
        return max(jittered, floor)
    }
}
