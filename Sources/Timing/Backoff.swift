/// How long to wait before trying again after `n` failures in a row: exponential
/// (`initial`, doubling each failure, capped at `maximum`), with a `jitter` share of each
/// delay drawn at random so that many clients that failed together do not retry together.
/// One value type for every retry in pushgate: APNs answers, reconnects, the dispatcher's
/// transient failures, the dead-token webhook.
public struct Backoff: Sendable, Equatable {
    /// The delay after the first failure (before jitter).
    public var initial: Duration
    /// No delay is longer than this (before a caller's own floor, such as `Retry-After`).
    public var maximum: Duration
    /// The share of each delay that is random, from 0 (exact) to 1 (anywhere from 0 to
    /// the full delay). 0.5 keeps half of it fixed: retries always back off, yet spread.
    public var jitter: Double

    public init(initial: Duration, maximum: Duration, jitter: Double = 0) {
        self.maximum = max(maximum, .zero)
        self.initial = min(max(initial, .zero), self.maximum)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before the attempt that follows failure number `failures` (1 for the
    /// first failure; 0 or less is treated as 1). `unit` is a random number in [0, 1),
    /// injected so tests are exact; it is clamped into that range.
    public func delay(afterFailures failures: Int, unit: Double) -> Duration {
        let window = self.window(afterFailures: failures)
        guard jitter > 0 else { return window }
        let u = min(max(unit, 0), 0.999_999_999)
        return window * (1 - jitter) + window * (jitter * u)
    }

    /// The delay before jitter: `initial × 2^(failures − 1)`, capped at `maximum`.
    public func window(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 62)
        var window = initial
        for _ in 0..<exponent {
            if window >= maximum || window * 2 >= maximum { return maximum }
            window *= 2
        }
        return min(window, maximum)
    }

    /// A random `unit` for `delay(afterFailures:unit:)`.
    public static func randomUnit() -> Double { Double.random(in: 0..<1) }
}
