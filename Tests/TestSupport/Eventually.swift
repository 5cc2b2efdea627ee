#if canImport(Glibc)
import Glibc
#endif
import Timing

/// Waits until `condition` holds, checking every `interval`, for at most `timeout` of real
/// time. Returns whether it held: callers `#expect` the answer, so a timeout is a test
/// failure with the caller's own message, never a hang.
///
/// Time the waiter spent not running does not count: in a parallel run, synchronous tests
/// (each waiting for a child process) can hold every thread of the cooperative pool for a
/// minute, and then neither this loop nor the tasks it waits for run. A sleep that comes
/// back much later than asked moves the deadline by the difference, so a starved pool
/// delays a verdict instead of deciding it.
public func eventually(timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = SystemClock()
    var deadline = clock.monotonicSeconds() + timeout.inSeconds
    while true {
        if try await condition() { return true }
        let checked = clock.monotonicSeconds()
        if checked >= deadline { return false }
        try? await Task.sleep(for: interval)
        let overslept = clock.monotonicSeconds() - checked - interval.inSeconds
        if overslept > starvedAfterSeconds { deadline += overslept }
    }
}

/// A sleep this much later than asked is the pool being starved, not the system being slow.
private let starvedAfterSeconds = 0.25

/// `eventually` for a synchronous test: it blocks its thread between checks instead of
/// suspending, so a busy cooperative pool (a parallel test run) cannot delay the checks
/// of a test whose timing matters. (A different name so that an async test never picks
/// it by accident and blocks a pool thread.)
public func eventuallyBlocking(timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10),
                       _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = SystemClock()
    let deadline = clock.monotonicSeconds() + timeout.inSeconds
    while true {
        if try condition() { return true }
        if clock.monotonicSeconds() >= deadline { return false }
        usleep(UInt32(clamping: interval.inMilliseconds * 1000))
    }
}
