#if canImport(Glibc)
import Glibc
#endif
internal import CLinuxShims
import Dispatch
import OSThreads
import Synchronization

/// A fixed set of threads running long requests (previews, campaign intake, link
/// batches) so libmicrohttpd's own threads stay free for probes. The queue is bounded:
/// `submit` refuses when it is full, and the caller answers 503 instead of waiting.
/// Whenever the last running job ends with nothing queued, that worker runs `whenIdle`
/// (housekeeping that must not run on an I/O thread or while long work is under way).
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        /// Taken jobs are set to nil at once: a job holds its request (a body of up to
        /// `maxBodyBytes`), which must not outlive it.
        var queue: [Job?] = []
        var head = 0
        var running = 0
        var stopping = false
    }

    let workers: Int
    let queueLimit: Int
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let whenIdle: @Sendable () -> Void

    init(workers: Int, queueLimit: Int, name: String = "pg-http", whenIdle: @escaping @Sendable () -> Void = {}) throws(HTTPServerError) {
        self.whenIdle = whenIdle
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        var started = 0
        for index in 0..<self.workers {
            // Detached: a stop does not wait for a long job; the job's answer is
            // dropped if the server has answered for it already.
            guard DetachedThread.start(name: "\(name)-\(index)", { [self] in work() }) else {
                stop(threads: started)
                throw HTTPServerError(code: .startFailed, message: "cannot start the worker threads")
            }
            started += 1
        }
    }

    /// Jobs waiting plus jobs running.
    var load: Int { state.withLock { $0.queue.count - $0.head + $0.running } }

    /// Queues `job`; false when `workers` jobs are running and `queueLimit` wait already.
    func submit(_ job: @escaping Job) -> Bool {
        let accepted = state.withLock { state -> Bool in
            let waiting = state.queue.count - state.head
            guard !state.stopping, state.running + waiting < workers + queueLimit else { return false }
            state.queue.append(job)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Takes no more jobs; the threads end once the queue is empty. Does not wait.
    func stop() { stop(threads: workers) }

    private func stop(threads: Int) {
        let already = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !already else { return }
        for _ in 0..<threads { available.signal() }
    }

    /// How much nicer than the process the workers run. Long work then yields the CPU to
    /// the I/O threads at once (probes, short requests), instead of sharing it evenly.
    static let niceness: Int32 = 10

    private func work() {
        _ = pg_thread_renice(Self.niceness)
        while true {
            available.wait()
            var job = state.withLock { state -> Job? in
                guard state.head < state.queue.count else { return nil }
                let job = state.queue[state.head]
                state.queue[state.head] = nil
                state.head += 1
                if state.head > 64 && state.head * 2 > state.queue.count {
                    state.queue.removeFirst(state.head)
                    state.head = 0
                }
                state.running += 1
                return job
            }
            guard let run = job else {
                if state.withLock({ $0.stopping }) { return }
                continue
            }
            run()
            job = nil
            let drained = state.withLock { state -> Bool in
                state.running -= 1
                return state.running == 0 && state.head == state.queue.count
            }
            if drained { whenIdle() }
        }
    }
}
