internal import CMicroHTTPD
import Synchronization

/// A request running on the worker pool (or the upstream pool) while its libmicrohttpd
/// connection is suspended. It is resumed exactly once: by the job with its answer, or by a stop with
/// `shuttingDown` (a job not yet started then never runs).
final class SuspendedRequest: Sendable {
    enum Phase: Int { case queued, running, answered }

    let request: HTTPRequest
    /// The connection's address bits (`OpaquePointer` is not `Sendable`).
    private let connection: UInt
    private let phase = Atomic<Int>(Phase.queued.rawValue)
    private let answer = Mutex<PreparedResponse?>(nil)

    init(request: HTTPRequest, connection: OpaquePointer) {
        self.request = request
        self.connection = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    /// Called by the worker before running: false if a stop already answered it.
    func start() -> Bool {
        phase.compareExchange(expected: Phase.queued.rawValue, desired: Phase.running.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Called by a worker whose answer hands off: the job waits again (for an upstream
    /// worker); false if a stop already answered it.
    func requeue() -> Bool {
        phase.compareExchange(expected: Phase.running.rawValue, desired: Phase.queued.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Sets the answer and resumes the connection, unless it was answered already.
    /// `onlyIfQueued`: answer only a job that has not started (a stop before its deadline).
    @discardableResult
    func finish(with response: PreparedResponse?, onlyIfQueued: Bool = false, resume: (OpaquePointer) -> Void) -> Bool {
        while true {
            let current = phase.load(ordering: .acquiring)
            if current == Phase.answered.rawValue { return false }
            if onlyIfQueued && current != Phase.queued.rawValue { return false }
            if phase.compareExchange(expected: current, desired: Phase.answered.rawValue, ordering: .acquiringAndReleasing).exchanged {
                break
            }
        }
        answer.withLock { $0 = response }
        resume(OpaquePointer(bitPattern: connection)!)
        return true
    }

    /// The answer, after the connection was resumed.
    func takeAnswer() -> PreparedResponse? {
        answer.withLock { answer in
            defer { answer = nil }
            return answer
        }
    }
}
