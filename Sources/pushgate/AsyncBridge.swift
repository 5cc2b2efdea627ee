import Dispatch
import Synchronization

/// Runs async work from a synchronous command and waits for its result. Commands are
/// plain functions returning an exit status; this is the one place that crosses over.
func runAndWait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await work()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    // The task stored a value before signalling; nil cannot happen.
    return result.withLock { $0 }!
}
