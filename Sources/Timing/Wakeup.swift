import Dispatch

/// A signal a long-running loop sleeps on between turns: `signal()` wakes it at once,
/// otherwise `wait(for:)` returns after the duration. The timeout runs on the monotonic
/// clock (Dispatch's uptime clock), so setting the wall clock neither shortens nor
/// stretches a loop's sleep; it is the one place outside `TimeSource` that reads it.
public final class Wakeup: Sendable {
    private let semaphore: DispatchSemaphore

    public init() { semaphore = DispatchSemaphore(value: 0) }

    /// Wakes one waiter (or the next one to wait).
    public func signal() { semaphore.signal() }

    /// Sleeps until signalled or until `duration` passed (negative: no wait). True when signalled.
    @discardableResult
    public func wait(for duration: Duration) -> Bool {
        let nanoseconds = max(0, min(duration.inSeconds, 86_400 * 365)) * 1e9
        return semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
    }

    /// Sleeps until signalled, however long that takes.
    public func wait() { semaphore.wait() }
}
