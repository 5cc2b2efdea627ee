import Dispatch

/// Runs the background sends' tasks on a dispatch queue of their own rather than on the
/// shared cooperative pool, so campaigns keep moving even when every pool thread is busy
/// with (or blocked in) other work. The queue is serial: the sends themselves wait on the
/// network, not on this thread, so one thread keeps thousands in flight.
public final class SendExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only state is a DispatchQueue, which is thread-safe.
    private let queue: DispatchQueue

    public init(label: String = "pushgate.sends") {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        queue.async { [self] in
            unowned.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
