import Dispatch
import Synchronization

/// Runs async work from synchronous code and waits for its result: commands (plain
/// functions returning an exit status) and HTTP handlers (which run on a worker thread)
/// cross over here, and nowhere else.
public func runAndWait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
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
