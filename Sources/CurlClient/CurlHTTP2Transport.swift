import APNsCore
import Dispatch
import Glibc
import OSThreads
import Synchronization
import Timing

/// How the libcurl transport connects.
public struct TransportSettings: Sendable, Equatable {
    /// `http://127.0.0.1:PORT` (h2c, prior knowledge) or `https://host[:port]` (TLS, verified).
    public var baseURL: String
    public var caFile: String?
    public var connections: Int
    /// Streams per connection we allow ourselves; the server's SETTINGS may lower it.
    public var maxConcurrentStreams: Int
    /// Deadline per request, from its write (each send) to the last byte of the answer.
    public var timeoutMilliseconds: Int
    /// How many times a request that got no answer (refused stream, GOAWAY above its
    /// stream, lost connection) is sent again, libcurl's own re-sends included. These are
    /// not APNs attempts. A request never sent (no connection) is not counted here.
    public var maxResends: Int
    /// Failed connection attempts in a row (refused, timed out, TLS) after which APNs is
    /// treated as unreachable: the queue ends as `unreachable`, and a connect-only probe
    /// goes out with backoff until a connection works again.
    public var breakerThreshold: Int
    /// Transport threads, each with its own multi handle and a share of `connections`
    /// (so at most `connections` of them).
    public var threads: Int
    /// HTTP/2 PING on a connection quiet this long, where libcurl can (its upkeep).
    public var upkeepIntervalMilliseconds: Int
    /// A connection that carried nothing for longer than this (whole seconds) is not
    /// trusted with a request: it is closed and a new one opened (`CURLOPT_MAXAGE_CONN`).
    public var maxIdleSeconds: Int
    /// An answer that started before its deadline may take this much longer to finish;
    /// then it ends with what arrived (its status line wins).
    public var stalledAnswerMilliseconds: Int

    public init(baseURL: String, caFile: String? = nil, connections: Int = 1, maxConcurrentStreams: Int = 100,
                timeoutMilliseconds: Int = 10_000, maxResends: Int = 5, breakerThreshold: Int = 3,
                upkeepIntervalMilliseconds: Int = 20_000, maxIdleSeconds: Int = 60, threads: Int = 1,
                stalledAnswerMilliseconds: Int = 5_000) {
        self.baseURL = baseURL
        self.caFile = caFile
        self.connections = connections
        self.maxConcurrentStreams = maxConcurrentStreams
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxResends = maxResends
        self.breakerThreshold = breakerThreshold
        self.upkeepIntervalMilliseconds = upkeepIntervalMilliseconds
        self.maxIdleSeconds = maxIdleSeconds
        self.threads = threads
        self.stalledAnswerMilliseconds = stalledAnswerMilliseconds
    }

    /// Workers to run: `threads`, at least one, at most one per connection.
    var workerCount: Int { max(1, min(threads, connections)) }
}

/// A request waiting for its answer; answered exactly once, from the transport thread.
final class TransportJob: @unchecked Sendable {
    /// Moved in from the caller (no copy).
    let request: TransportRequest
    /// Who is told the outcome: a waiting task, or a callback (`HTTPTransport.send(_:then:)`).
    /// The continuation is unchecked: `finish` is called exactly once per job (the loop
    /// hands every job it takes to exactly one outcome), and a checked one costs an
    /// allocation per request.
    private enum Waiter {
        case task(UnsafeContinuation<TransportOutcome, Never>)
        case callback(@Sendable (TransportOutcome) -> Void)
    }
    /// Set before the job is handed to the loop; taken by `finish`, so a second finish
    /// traps instead of answering twice.
    private var waiter: Waiter?
    /// Times it went out (counted by libcurl's pre-request callback, re-sends included).
    var sends = 0
    /// Times it went back to the queue to wait for a new connection.
    var reconnects = 0
    /// Times libcurl held it unwritten past `unwrittenMilliseconds` and it went back to
    /// the queue; past `CurlLoop.maxUnwrittenReturns` it ends `notStarted` (given back).
    var unwrittenReturns = 0
    /// Monotonic milliseconds by which it must be answered: armed at each write (the
    /// pre-request callback), `.max` until then; time spent waiting in our queue, for a
    /// stream or for a connection does not count.
    var deadline: UInt64

    init(request: consuming TransportRequest, deadline: UInt64) {
        self.request = request
        self.deadline = deadline
    }

    /// Its caller's continuation, set before the job is handed to the loop.
    func wait(on continuation: UnsafeContinuation<TransportOutcome, Never>) { waiter = .task(continuation) }

    /// Its caller's callback, set before the job is handed to the loop.
    func call(_ done: @escaping @Sendable (TransportOutcome) -> Void) { waiter = .callback(done) }

    /// Resuming only queues the caller's task; a callback runs here, inside the loop's
    /// pass, and is quick by contract. So the loop calls this as soon as an outcome is known.
    func finish(_ outcome: consuming TransportOutcome) {
        switch waiter.take()! {
        case .task(let continuation): continuation.resume(returning: outcome)
        case .callback(let done): done(outcome)
        }
    }
}

/// HTTP/2 to APNs through `threads` transport threads (`CurlWorker`), each with its own
/// libcurl multi handle and its share of the `connections`.
///
/// Requests go to the workers in turn, skipping a worker whose circuit breaker is open while
/// another can still reach APNs. In each worker, requests are multiplexed over its
/// connections (`CURLPIPE_MULTIPLEX`, `CURLOPT_PIPEWAIT`), at most `connections ×
/// maxConcurrentStreams` in flight; the rest wait in its queue. libcurl/nghttp2 keep each
/// connection within the server's advertised stream limit. What becomes of a request that
/// gets no answer is described on `CurlLoop`.
public final class CurlHTTP2Transport: HTTPTransport {
    let workers: [CurlWorker]
    private let nextWorker = Atomic<Int>(0)
    public let settings: TransportSettings

    public init(settings: TransportSettings, clock: any TimeSource) throws(TransportFailure) {
        if settings.baseURL.hasPrefix("http://"), !CurlCapabilities.reusesCleartextHTTP2 {
            throw TransportFailure(.transportError, "libcurl \(CurlCapabilities.versionString) cannot reuse HTTP/2 cleartext connections "
                + "(curl issue #10634, fixed in 8.0.0); use an https:// url (with caFile for a local server)")
        }
        self.settings = settings
        let count = settings.workerCount
        var workers: [CurlWorker] = []
        for index in 0..<count {
            var share = settings
            share.connections = settings.connections / count + (index < settings.connections % count ? 1 : 0)
            do throws(TransportFailure) {
                workers.append(try CurlWorker(settings: share, clock: clock, index: index))
            } catch {
                for worker in workers { worker.shutdown() }
                throw error
            }
        }
        self.workers = workers
    }

    deinit { shutdown() }

    public nonisolated(nonsending) func send(_ request: consuming TransportRequest) async -> TransportOutcome {
        await pickWorker().send(request)
    }

    /// `done` runs on a transport thread, inside its loop's pass: no task per request.
    public func send(_ request: consuming TransportRequest, then done: @escaping @Sendable (TransportOutcome) -> Void) {
        pickWorker().send(request, then: done)
    }

    /// The next worker in turn, past one that cannot reach APNs while another can.
    private func pickWorker() -> CurlWorker {
        guard workers.count > 1 else { return workers[0] }
        let first = nextWorker.wrappingAdd(1, ordering: .relaxed).oldValue
        for step in 0..<workers.count {
            let worker = workers[(first &+ step) % workers.count]
            if worker.statistics.isReachable { return worker }
        }
        return workers[first % workers.count]
    }

    /// The first step of a stop: from now on no request starts (none goes on the wire, not
    /// even one libcurl would send again on a fresh connection). Requests waiting for a
    /// stream or a connection, and every later `send`, finish at once as `notStarted`;
    /// requests already sent go on and are answered.
    public func stopStartingRequests() {
        for worker in workers { worker.stopStartingRequests() }
    }

    /// Stops the threads; requests not yet answered finish as `cancelled`. Returns once
    /// every transport thread has ended: none is still in libcurl or OpenSSL (freeing its
    /// easy handles and their TLS sessions) when the caller goes on to `exit`, whose
    /// handlers tear OpenSSL down.
    public func shutdown() {
        for worker in workers { worker.beginShutdown() }
        for worker in workers { worker.waitUntilEnded() }
    }

    /// Transport threads (workers) actually running.
    public var threads: Int { workers.count }

    func total(_ value: (TransportStatistics.Values) -> Int) -> Int {
        workers.reduce(0) { sum, worker in sum + worker.statistics.values.withLock { value($0) } }
    }

    /// Counters for tests and metrics: connection failures seen, connections opened (sockets).
    public var connectionFailures: Int { total(\.connectionFailures) }
    public var connectionsOpened: Int { total(\.connectionsOpened) }
    /// Connections closed because they answered nothing for a whole deadline while
    /// requests waited on them (see `CurlLoop`).
    public var silentConnectionsClosed: Int { total(\.silentConnectionsClosed) }

    /// Whether APNs can be reached, for `/readyz`, metrics and `send`'s exit status: it
    /// cannot once every worker's breaker is open (since the earliest of them).
    public var reachability: Reachability {
        var earliest: (since: Int64, lastError: String)?
        for worker in workers {
            let (since, lastError) = worker.statistics.values.withLock { ($0.unreachableSince, $0.lastError) }
            guard let since else { return .reachable }
            if earliest == nil || since < earliest!.since { earliest = (since, lastError) }
        }
        return earliest.map { .unreachable(since: $0.since, lastError: $0.lastError) } ?? .reachable
    }
}

/// One transport thread: a libcurl multi handle, the thread that drives it (`CurlLoop`),
/// and the inbox callers hand requests to.
final class CurlWorker: Sendable {
    private let multi: CurlMultiHandle
    private let inbox = TransportInbox()
    private let gate = StartGate()
    let statistics = TransportStatistics()
    /// Set by the transport thread as its last act (after every libcurl and OpenSSL call).
    private let ended = ThreadEnd()

    /// `index` names its thread: `pg-apns-N`.
    init(settings: TransportSettings, clock: any TimeSource, index: Int) throws(TransportFailure) {
        guard let multi = CurlMultiHandle() else { throw TransportFailure(.transportError, "libcurl could not create a multi handle") }
        self.multi = multi
        let loop = CurlLoop(multi: multi, settings: settings, statistics: statistics, gate: gate, clock: clock)
        let inbox = inbox
        let ended = ended
        guard DetachedThread.start(name: "pg-apns-\(index)", {
            ended.noteOwner()
            loop.run(inbox: inbox)
            ended.mark()
        }) else {
            ended.mark()
            throw TransportFailure(.transportError, "cannot start the transport thread pg-apns-\(index)")
        }
    }

    nonisolated(nonsending) func send(_ request: consuming TransportRequest) async -> TransportOutcome {
        if gate.isClosed { return .failure(StartGate.refusal) }
        // Made here and kept across the wait, so that it is usually freed here too, on the
        // thread whose heap it came from, not on the transport thread.
        // No deadline yet: the pre-request callback arms it when the request is written.
        let job = TransportJob(request: request, deadline: .max)
        defer { withExtendedLifetime(job) {} }
        return await withUnsafeContinuation { continuation in
            job.wait(on: continuation)
            hand(job)
        }
    }

    func send(_ request: consuming TransportRequest, then done: @escaping @Sendable (TransportOutcome) -> Void) {
        if gate.isClosed { return done(.failure(StartGate.refusal)) }
        let job = TransportJob(request: request, deadline: .max)
        job.call(done)
        hand(job)
    }

    /// Into the inbox. The thread is woken only when it is about to sleep with room for
    /// more (`TransportInbox.mayWait`), and then by the first request only: a busy thread
    /// takes the inbox on its next pass anyway, so most requests cost no wakeup at all,
    /// and one wakeup serves a whole batch.
    private func hand(_ job: TransportJob) {
        let (accepted, wake) = inbox.state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.jobs.append(job)
            let wake = state.waitsForWork
            if wake { state.waitsForWork = false }
            return (true, wake)
        }
        if !accepted {
            job.finish(.failure(TransportFailure(.cancelled, "transport is shut down")))
        } else if wake {
            multi.wakeup()
        }
    }

    func stopStartingRequests() {
        gate.close()
        multi.wakeup()  // the thread gives back what waits in its queue now
    }

    func shutdown() {
        beginShutdown()
        waitUntilEnded()
    }

    func beginShutdown() {
        inbox.state.withLock { $0.stopping = true }
        multi.wakeup()
    }

    /// Waits for the transport thread's last act; at once if called on that thread (it
    /// would wait for itself).
    func waitUntilEnded() {
        guard !ended.isCurrentThread else { return }
        ended.wait()
    }

    var hasEnded: Bool { ended.hasEnded }
}

/// A thread's end, waited for by any number of callers, any number of times.
final class ThreadEnd: Sendable {
    private let state = Mutex<(ended: Bool, waiters: Int)>((false, 0))
    private let signal = DispatchSemaphore(value: 0)
    /// The thread whose end this is (it records itself when it starts).
    private let owner = Atomic<UInt>(0)

    func noteOwner() { owner.store(UInt(pthread_self()), ordering: .relaxed) }
    var isCurrentThread: Bool { owner.load(ordering: .relaxed) == UInt(pthread_self()) }
    var hasEnded: Bool { state.withLock { $0.ended } }

    func mark() {
        let waiters = state.withLock { state -> Int in
            state.ended = true
            defer { state.waiters = 0 }
            return state.waiters
        }
        for _ in 0..<waiters { signal.signal() }
    }

    func wait() {
        let mustWait = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.waiters += 1
            return true
        }
        if mustWait { signal.wait() }
    }
}

/// Closed at the start of a stop: no request of this worker starts after that. Read by
/// callers, by the transport thread before it hands a request to libcurl, and in libcurl's
/// pre-request callback right before any send.
final class StartGate: Sendable {
    private let closed = Atomic<Bool>(false)

    func close() { closed.store(true, ordering: .releasing) }
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    static let refusal = TransportFailure(.notStarted, "not sent: the process is stopping and starts no request to APNs")
}

/// What the circuit breaker says about APNs.
public enum Reachability: Sendable, Equatable {
    case reachable
    /// Since `since` (seconds since 1970) every connection attempt failed; `lastError` is
    /// libcurl's message for the last one.
    case unreachable(since: Int64, lastError: String)
}

/// Requests handed over by callers, picked up by the transport thread.
final class TransportInbox: Sendable {
    struct State {
        var jobs: [TransportJob] = []
        var stopping = false
        /// The thread sleeps (or is about to) with room for more requests: the next
        /// request must wake it.
        var waitsForWork = false
    }
    let state = Mutex(State())

    /// Everything queued since the last call, swapped into `jobs` (which the caller has
    /// emptied, keeping its storage), and whether to stop.
    func take(jobs: inout [TransportJob]) -> Bool {
        state.withLock { state in
            swap(&state.jobs, &jobs)
            state.waitsForWork = false
            return state.stopping
        }
    }

    /// Called by the thread before it sleeps: false when requests (or a stop) arrived
    /// since `take`, which it must take first. Otherwise the next request wakes it if it
    /// has room (`wantsWork`); one that has none picks requests up when a transfer ends.
    func mayWait(wantsWork: Bool) -> Bool {
        state.withLock { state in
            guard state.jobs.isEmpty, !state.stopping else { return false }
            state.waitsForWork = wantsWork
            return true
        }
    }
}

final class TransportStatistics: Sendable {
    struct Values {
        var connectionFailures = 0
        var requeued = 0
        var connectionsOpened = 0
        var connectionsClosed = 0
        var stallsRelieved = 0
        var silentConnectionsClosed = 0
        /// The sockets libcurl has open (its connections).
        var sockets: Set<Int32> = []
        var libcurlResends = 0
        var unreachableSince: Int64?
        var lastError = ""
    }
    let values = Mutex(Values())
    /// Sockets open now (opened less closed), kept apart from `values` so that the
    /// transport thread reads it for every request without taking the lock.
    let openSockets = Atomic<Int>(0)

    var liveConnections: Int { openSockets.load(ordering: .relaxed) }
    var isReachable: Bool { values.withLock { $0.unreachableSince == nil } }
}
