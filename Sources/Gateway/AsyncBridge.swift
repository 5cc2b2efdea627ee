import Dispatch
import Synchronization

/// Runs async work from synchronous code and waits for its result: commands (plain
/// functions returning an exit status) and HTTP handlers cross over here, and nowhere
/// else. A handler that waits on another host does so only inside an `HTTPResponse.handOff`
/// (the server's upstream pool), never on an I/O thread or a shared worker.
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
