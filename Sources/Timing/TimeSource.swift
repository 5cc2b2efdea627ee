#if canImport(Glibc)
import Glibc
#endif

/// The one clock every part of pushgate reads and waits on, injected so tests can move
/// time by hand (Tests/TestSupport's `ManualClock`). Two kinds of time, never mixed:
/// wall time for stamps that leave the process (a JWT's `iat`, `created_at`, Apple's
/// dead-token timestamps), monotonic time for deadlines and durations, which must not jump
/// when the wall clock is set.
public protocol TimeSource: Sendable {
    /// Seconds since 1970-01-01T00:00:00Z, with the fraction.
    func wallSeconds() -> Double
    /// Nanoseconds since an arbitrary fixed point; never goes backwards.
    func monotonicNanoseconds() -> UInt64
    /// Suspends the caller for `duration` of this clock's monotonic time (throws
    /// `CancellationError` when the task is cancelled first).
    func sleep(for duration: Duration) async throws
}

extension TimeSource {
    /// Whole seconds since 1970 (rounded down): JWT `iat`, token ages.
    public func secondsSince1970() -> Int64 { Int64(wallSeconds().rounded(.down)) }

    /// Whole milliseconds since 1970: the unit of Apple's 410 timestamps.
    public func millisecondsSince1970() -> Int64 { Int64((wallSeconds() * 1000).rounded(.down)) }

    public func monotonicMilliseconds() -> UInt64 { monotonicNanoseconds() / 1_000_000 }

    public func monotonicSeconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }
}

/// The real clocks: `CLOCK_REALTIME` and `CLOCK_MONOTONIC`.
public struct SystemClock: TimeSource {
    public init() {}

    public func wallSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension Duration {
    /// The duration in seconds, fraction included (for APIs that take a `Double`).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds, rounded down (saturating).
    public var inMilliseconds: Int64 {
        let (ms, overflow) = components.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return components.seconds < 0 ? .min : .max }
        return ms + components.attoseconds / 1_000_000_000_000_000
    }
}
