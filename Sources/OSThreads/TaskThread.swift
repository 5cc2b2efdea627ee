import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own that runs the tasks which prefer it (`Task(executorPreference:)`,
/// `group.addTask(executorPreference:)`): the Swift side of the APNs sends runs here, next
/// to its transport thread rather than on it, so that libcurl's loop carries libcurl's
/// work alone and the two use two cores.
///
/// Jobs enqueued while it runs are taken as one batch on its next round; it sleeps only
/// when none is left, and the first job after that wakes it (one wakeup per batch, not
/// per job). Once stopped, and after the jobs queued by then, later jobs run on
/// Dispatch's global queue, so a task that prefers it always runs.
public final class TaskThread: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// It sleeps (or is about to): the next job must wake it.
        var sleeps = false
        var stopping = false
        /// Its loop is over: jobs go to Dispatch's global queue.
        var ended = false
    }
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The thread's `pthread_t` once it runs (0 before).
    private let threadID = Atomic<UInt>(0)

    /// Nil when the system gives no thread.
    public init?(name: String) {
        guard DetachedThread.start(name: name, { [self] in run() }) else { return nil }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let task = UnownedJob(job)
        let wakeIt: Bool? = state.withLock { state in
            guard !state.ended else { return nil }
            state.jobs.append(task)
            defer { state.sleeps = false }
            return state.sleeps
        }
        switch wakeIt {
        case nil: DispatchQueue.global().async { task.runSynchronously(on: self.asUnownedTaskExecutor()) }
        case true?: wake.signal()
        case false?: break
        }
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    /// Whether `thread` is this one.
    public func runs(on thread: pthread_t) -> Bool { threadID.load(ordering: .relaxed) == UInt(thread) }

    /// Ends the loop once the jobs queued by then have run.
    public func stop() {
        let wakeIt = state.withLock { state in
            state.stopping = true
            defer { state.sleeps = false }
            return state.sleeps
        }
        if wakeIt { wake.signal() }
    }

    private enum Step { case run, sleep, end }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        while true {
            let step = state.withLock { state -> Step in
                swap(&state.jobs, &batch)
                if !batch.isEmpty { return .run }
                if state.stopping {
                    state.ended = true
                    return .end
                }
                state.sleeps = true
                return .sleep
            }
            switch step {
            case .run:
                for job in batch { job.runSynchronously(on: executor) }
                batch.removeAll(keepingCapacity: true)
            case .sleep:
                wake.wait()
            case .end:
                return
            }
        }
    }
}
