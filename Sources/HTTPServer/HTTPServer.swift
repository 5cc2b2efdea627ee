#if canImport(Glibc)
import Glibc
#endif
internal import CLinuxShims
internal import CMicroHTTPD
internal import CMicroHTTPDShims
import Synchronization
import Timing

/// An HTTP/1.1 server on libmicrohttpd: its own thread pool polling with epoll, bodies
/// read in chunks up to a limit, connection and per-IP limits, idle timeouts, and a
/// graceful stop. Connections are accepted here, not by libmicrohttpd, so that the
/// first head of each is checked strictly before libmicrohttpd parses it
/// (`ConnectionGate`); every later head is checked on what libmicrohttpd parsed. The
/// daemon handle is owned here and stopped in `deinit` at the latest.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is set once in init and only handed to MHD, which is
    // thread-safe; `stopped` guards the one call that ends it; `gate` stops itself once.
    private let daemon: OpaquePointer
    /// Internal, not private: the tests read its pools' load and its heap trims.
    let context: ServerContext
    private let contextPointer: UnsafeMutableRawPointer
    private let stopped = Mutex(false)
    private let gate: ConnectionGate

    /// The port really bound (useful when the configuration asked for 0).
    public let port: Int
    public let configuration: HTTPServerConfiguration

    /// `clock`: the monotonic deadlines of a stop and of a request head; the `Date` of
    /// the answers written outside libmicrohttpd.
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, clock: any TimeSource) throws(HTTPServerError) {
        self.configuration = configuration
        let check = RequestHeadCheck()
        let trim = HeapTrim()
        let pool = try WorkerPool(workers: configuration.workers, queueLimit: configuration.workerQueue,
                                  whenIdle: { trim.runIfWanted() })
        let upstream: WorkerPool
        do {
            upstream = try WorkerPool(workers: configuration.upstreamWorkers, queueLimit: configuration.upstreamQueue, name: "pg-upstream")
        } catch {
            pool.stop()
            throw error
        }
        let context = ServerContext(responder: responder, maxBodyBytes: configuration.maxBodyBytes, check: check, pool: pool,
                                    upstream: upstream, trim: trim, clock: clock)
        self.context = context
        let contextPointer = Unmanaged.passRetained(context).toOpaque()
        self.contextPointer = contextPointer

        let listener: ListeningSocket
        do {
            listener = try ListeningSocket(host: configuration.host, port: configuration.port)
        } catch {
            pool.stop()
            upstream.stop()
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw error
        }
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_NO_LISTEN_SOCKET.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue)
        if listener.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        let started: OpaquePointer? = pg_mhd_start_daemon(
            flags,
            accessHandler, contextPointer,
            requestCompleted, contextPointer,
            requestLineParsed, contextPointer,
            connectionNotified, contextPointer,
            UInt32(clamping: configuration.connectionLimit),
            UInt32(clamping: configuration.perIPConnectionLimit),
            UInt32(clamping: configuration.connectionTimeoutSeconds),
            UInt32(clamping: max(1, configuration.threads)),
            64 * 1024)
        guard let started else {
            pool.stop()
            upstream.stop()
            close(listener.fd)
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw HTTPServerError(code: .startFailed,
                                  message: "cannot start the HTTP server: \(String(cString: strerror(errno)))")
        }
        daemon = started
        // libmicrohttpd's own answers are written as problems (see mhd_own_answers.c);
        // the handler finds each connection's server through its socket context.
        pg_mhd_set_library_answer_handler(libraryAnswer)
        context.daemonRunning.withLock { $0 = true }
        port = listener.port
        context.port.store(listener.port, ordering: .releasing)
        let daemonAddress = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(started)))
        do {
            gate = try ConnectionGate(
                listenFD: listener.fd,
                limits: .init(connections: configuration.connectionLimit, perAddress: configuration.perIPConnectionLimit,
                              headSeconds: configuration.connectionTimeoutSeconds),
                check: check,
                clock: clock,
                handOver: { fd, address, length in
                    let daemon = OpaquePointer(bitPattern: daemonAddress)
                    return MHD_add_connection(daemon, fd, address, length) == .YES
                },
                refuse: { violation, remoteAddress in
                    serialize(responder.refused(violation, remoteAddress: remoteAddress), closing: true, now: clock.wallSeconds())
                },
                abandoned: { remoteAddress in responder.answeredByLibrary(status: 0, remoteAddress: remoteAddress) })
        } catch {
            MHD_stop_daemon(started)
            pool.stop()
            upstream.stop()
            close(listener.fd)
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw error
        }
        context.gate.withLock { $0 = gate }
    }

    deinit {
        gate.stop()
        stopDaemon()
        Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
    }

    /// Requests being handled right now.
    public var requestsInFlight: Int { context.inFlight.load(ordering: .relaxed) }

    public var isShuttingDown: Bool { context.shuttingDown.load(ordering: .relaxed) }

    /// Stops accepting connections, answers requests on open connections with the
    /// responder's `shuttingDown`, waits for requests in flight up to `deadlineSeconds`,
    /// then stops. Returns true if everything in flight finished in time.
    @discardableResult
    public func shutdown(deadlineSeconds: Double) -> Bool {
        beginShutdown()
        let deadline = context.clock.monotonicSeconds() + deadlineSeconds
        var drained = context.inFlight.load(ordering: .relaxed) == 0
        while !drained && context.clock.monotonicSeconds() < deadline {
            usleep(5_000)
            drained = context.inFlight.load(ordering: .relaxed) == 0
        }
        stopDaemon()
        return drained
    }

    /// The first step of a stop: new connections are refused, and long requests still
    /// waiting for a worker are answered now; running ones may finish until the deadline.
    private func beginShutdown() {
        context.shuttingDown.store(true, ordering: .relaxed)
        gate.stop()
        context.answerSuspended(onlyIfQueued: true)
    }

    /// Whether libmicrohttpd's own answers (to malformed later requests and chunks) are
    /// replaced by the responder's problems; false only with a libmicrohttpd whose
    /// internal calls do not go through its symbol table (see mhd_own_answers.c).
    public static var replacesLibraryAnswers: Bool { pg_mhd_library_answers_interposed() != 0 }

    private func stopDaemon() {
        stopped.withLock { isStopped in
            guard !isStopped else { return }
            isStopped = true
            context.shuttingDown.store(true, ordering: .relaxed)
            // libmicrohttpd refuses to stop with a suspended connection: answer those
            // still on the pool and give its threads a moment to send the answers.
            if context.answerSuspended(onlyIfQueued: false) > 0 {
                let until = context.clock.monotonicSeconds() + 1
                while context.inFlight.load(ordering: .relaxed) > 0 && context.clock.monotonicSeconds() < until { usleep(5_000) }
            }
            context.daemonRunning.withLock { $0 = false }
            MHD_stop_daemon(daemon)
            context.pool.stop()
            context.upstream.stop()
        }
    }
}

/// Shared by every worker thread: the responder and the counters.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let maxBodyBytes: Int
    let check: RequestHeadCheck
    let pool: WorkerPool
    /// Where hand-offs run (`HTTPResponse.handOff`): work that waits on another host.
    let upstream: WorkerPool
    let inFlight = Atomic<Int>(0)
    let shuttingDown = Atomic<Bool>(false)
    /// The listening port, for `HTTPRequest.localPort` (set once the socket is bound).
    let port = Atomic<Int>(0)
    /// Bodies from this size up are followed by a heap trim.
    static let bigBodyBytes = 256 * 1024
    let trim: HeapTrim
    let clock: any TimeSource
    /// Guards every `MHD_resume_connection` against a stopped daemon.
    let daemonRunning = Mutex(false)
    /// The accept loop, which also keeps sockets open for a moment after a refusal.
    let gate = Mutex<ConnectionGate?>(nil)
    /// Requests on the pool; `closing` once a stop has begun (no new ones then).
    private let suspended = Mutex<(jobs: [ObjectIdentifier: SuspendedRequest], closing: Bool)>(([:], false))

    init(responder: any HTTPResponder, maxBodyBytes: Int, check: RequestHeadCheck, pool: WorkerPool, upstream: WorkerPool,
         trim: HeapTrim, clock: any TimeSource) {
        self.trim = trim
        self.clock = clock
        self.upstream = upstream
        self.responder = responder
        self.maxBodyBytes = maxBodyBytes
        self.check = check
        self.pool = pool
    }

    /// Suspends the connection and hands the request to the pool; a full pool answers
    /// `overloaded` at once (the connection is resumed with it).
    func runOnPool(_ request: HTTPRequest, connection: OpaquePointer) -> SuspendedRequest? {
        guard let job = suspend(request, connection: connection) else { return nil }
        let submitted = pool.submit { [self] in
            guard job.start() else { return }
            settle(job, with: responder.respond(to: job.request))
        }
        if !submitted { finish(job, with: responder.overloaded(request)) }
        return job
    }

    /// An answer made on an I/O thread that hands off: the connection is suspended and
    /// the work goes to the upstream pool. Nil when a stop has begun.
    func runUpstream(_ handOff: HTTPHandOff, request: HTTPRequest, connection: OpaquePointer) -> SuspendedRequest? {
        guard let job = suspend(request, connection: connection) else { return nil }
        submitUpstream(job, handOff)
        return job
    }

    private func suspend(_ request: HTTPRequest, connection: OpaquePointer) -> SuspendedRequest? {
        let job = SuspendedRequest(request: request, connection: connection)
        let registered = suspended.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.jobs[ObjectIdentifier(job)] = job
            return true
        }
        guard registered else { return nil }
        MHD_suspend_connection(connection)
        return job
    }

    /// A worker's answer: sent, or, when it hands off, queued again on the upstream pool
    /// (a stop answers it like any queued job until an upstream worker takes it).
    private func settle(_ job: SuspendedRequest, with response: HTTPResponse) {
        guard let handOff = response.handOff else { return finish(job, with: response) }
        guard job.requeue() else { return }
        submitUpstream(job, handOff)
    }

    private func submitUpstream(_ job: SuspendedRequest, _ handOff: HTTPHandOff) {
        let submitted = upstream.submit { [self] in
            guard job.start() else { return }
            finish(job, with: handOff.work().settled())
        }
        if !submitted { finish(job, with: handOff.busy()) }
    }

    func finish(_ job: SuspendedRequest, with response: HTTPResponse, onlyIfQueued: Bool = false) {
        let answered = job.finish(with: PreparedResponse(response, closing: closesAfter(job.request)), onlyIfQueued: onlyIfQueued) { connection in
            daemonRunning.withLock { running in
                if running { MHD_resume_connection(connection) }
            }
        }
        if answered { _ = suspended.withLock { $0.jobs.removeValue(forKey: ObjectIdentifier(job)) } }
    }

    /// Answers suspended requests with `shuttingDown`: with `onlyIfQueued` those not
    /// started, else all, and from then on none is taken. Returns how many it answered.
    @discardableResult
    func answerSuspended(onlyIfQueued: Bool) -> Int {
        let jobs = suspended.withLock { state -> [SuspendedRequest] in
            if !onlyIfQueued { state.closing = true }
            return Array(state.jobs.values)
        }
        var count = 0
        for job in jobs {
            let answered = job.finish(with: PreparedResponse(responder.shuttingDown(job.request), closing: true),
                                      onlyIfQueued: onlyIfQueued) { connection in
                daemonRunning.withLock { running in
                    if running { MHD_resume_connection(connection) }
                }
            }
            if answered {
                count += 1
                _ = suspended.withLock { $0.jobs.removeValue(forKey: ObjectIdentifier(job)) }
            }
        }
        return count
    }
}

extension ServerContext {
    /// Reads and drops what the client still sends on `fd` for a moment, then closes it,
    /// so that closing right after a refusal does not reset the connection before the
    /// client has read the answer.
    func drainThenClose(_ fd: Int32) {
        if let gate = gate.withLock({ $0 }) {
            gate.drainThenClose(fd)
        } else {
            close(fd)
        }
    }
}

/// Whether the connection closes after answering `request`: every request when the
/// head layout is unknown, and a request with a chunked body, since libmicrohttpd
/// decodes chunks more leniently than RFC 9112 allows (a bare LF ends a chunk line,
/// anything may follow a `;`): nothing after such a body is ever read as a request.
func closesAfter(_ request: HTTPRequest) -> Bool {
    !layoutChecks || request.header("transfer-encoding") != nil
}

/// glibc keeps freed memory in its per-thread arenas; after a big request the heap is
/// trimmed (`malloc_trim`) so the resident size returns near idle. The trim locks each
/// arena in turn and takes milliseconds, so it runs on a worker once the pool has
/// drained, never on an I/O or the accept thread and never while long work runs.
final class HeapTrim: Sendable {
    private let wanted = Atomic<Bool>(false)
    /// Trims done (tests and benchmarks read it).
    let count = Atomic<Int>(0)

    func want() { wanted.store(true, ordering: .releasing) }

    func runIfWanted() {
        guard wanted.exchange(false, ordering: .acquiringAndReleasing) else { return }
        pg_malloc_trim()
        count.add(1, ordering: .relaxed)
    }
}

/// One connection that libmicrohttpd serves, from its hand-over to its close (its socket
/// context). Only the connection's thread touches it.
final class ConnectionState {
    /// Where the connection's current request is, for naming what libmicrohttpd refused.
    enum Phase {
        /// Before a request line was parsed (libmicrohttpd checks its version first).
        case requestLine
        /// The request line was parsed; the header lines are arriving.
        case headerLines
        /// The head was handed to pushgate; the body is arriving.
        case body
    }

    let server: ServerContext
    var phase = Phase.requestLine
    /// libmicrohttpd's own answer to the current request was replaced, and logged.
    var libraryAnswerReplaced = false
    /// Bytes of the requests finished on this connection, heads and bodies: what the
    /// client sent beyond them at the close never became a request (see
    /// `connectionNotified`). Counted only while every request so far was finished in
    /// full with a plain `Content-Length` body and kept the connection open.
    var finishedBytes: Int64 = 0
    var countable = true

    init(server: ServerContext) {
        self.server = server
    }

    static func of(_ connection: OpaquePointer) -> ConnectionState? {
        pg_mhd_socket_context(connection).map { Unmanaged<ConnectionState>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// One request from its request line to its completion. Only the connection's thread
/// touches it.
final class RequestState {
    var request = HTTPRequest(method: "", path: "")
    /// The first access-handler call (the whole head) has happened.
    var headSeen = false
    /// The raw request line failed the layout check (a NUL, control byte or bare LF).
    var rawTargetProblem: Int32
    var answered = false
    /// Set while the request runs on the worker pool.
    var job: SuspendedRequest?
    var overLimit = false
    var discardedBytes = 0
    /// The body's size, kept after the body itself is handed over or dropped.
    var bodyBytes = 0
    /// The head's size as libmicrohttpd received it (request line to the empty line).
    var headBytes = 0
    /// Answered in a way that leaves input unread or closes the connection (a refusal,
    /// an early answer, a chunked body).
    var closing = false

    init(rawTargetProblem: Int32) {
        self.rawTargetProblem = rawTargetProblem
    }
}

// MARK: - C callbacks (no captures: state travels through the `cls` pointers)

/// The URI log callback: called for every request as soon as its request line is
/// parsed, before libmicrohttpd decodes the target. It creates the request's state, so
/// every request, also one libmicrohttpd answers by itself, reaches `requestCompleted`.
private let requestLineParsed: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = { _, uri, connection in
    if let connection { ConnectionState.of(connection)?.phase = .headerLines }
    let state = RequestState(rawTargetProblem: layoutChecks ? pg_mhd_raw_target_problem(uri) : 0)
    return Unmanaged.passRetained(state).toOpaque()
}

/// Whether this libmicrohttpd's head layout is known (see mhd.c); without it every
/// connection is closed after one request, so every head passes the raw check.
let layoutChecks = pg_mhd_layout_checks_supported() != 0

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let requestContext, let uploadDataSize else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if requestContext.pointee == nil {
        requestContext.pointee = Unmanaged.passRetained(RequestState(rawTargetProblem: 0)).toOpaque()
    }
    let state = Unmanaged<RequestState>.fromOpaque(requestContext.pointee!).takeUnretainedValue()

    if !state.headSeen {
        // First call: only the head has arrived.
        state.headSeen = true
        ConnectionState.of(connection)?.phase = .body
        if let gate = context.gate.withLock({ $0 }) {
            let fd = pg_mhd_connection_fd(connection)
            if fd >= 0 { gate.forgetHead(fd) }
        }
        var request = readHead(connection: connection, url: url, method: method)
        request.localPort = context.port.load(ordering: .acquiring)
        state.request = request
        context.inFlight.add(1, ordering: .relaxed)
        let versionText = version.map { String(cString: $0) } ?? ""
        let layoutProblem = layoutChecks && state.rawTargetProblem == 0
            ? pg_mhd_head_layout_problem(connection, method, url, version) : state.rawTargetProblem
        let headSize = pg_mhd_head_size(connection)
        state.headBytes = headSize
        let sizeViolation = headSize > context.check.maxHeadBytes
            ? FramingViolation(.headersTooLarge, "the request head is over \(context.check.maxHeadBytes) bytes") : nil
        if let violation = sizeViolation ?? layoutViolation(layoutProblem)
            ?? parsedHeadViolation(request, version: versionText, check: context.check) {
            state.answered = true
            state.closing = true
            return queue(context.responder.refused(violation, remoteAddress: request.remoteAddress), on: connection,
                         closing: true)
        }
        if context.shuttingDown.load(ordering: .relaxed) {
            state.answered = true
            state.closing = true
            return queue(context.responder.shuttingDown(request), on: connection)
        }
        state.closing = closesAfter(request)
        if let declared = request.header("content-length").flatMap(Int.init), declared > context.maxBodyBytes {
            state.answered = true
            state.closing = true
            return queue(context.responder.bodyTooLarge(request, limit: context.maxBodyBytes), on: connection)
        }
        return .YES
    }

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        uploadDataSize.pointee = 0
        if state.answered { return .YES }
        if state.overLimit || state.request.body.count + chunkSize > context.maxBodyBytes {
            // libmicrohttpd cannot answer in the middle of an upload: drop the rest of
            // the body (memory stays bounded) and answer 413 at its end; a sender that
            // keeps going far past the limit is cut off.
            state.overLimit = true
            state.request.body = []
            state.discardedBytes += chunkSize
            return state.discardedBytes > 64 * context.maxBodyBytes ? .NO : .YES
        }
        state.bodyBytes += chunkSize
        if state.request.body.isEmpty, let declared = state.request.header("content-length").flatMap(Int.init),
           declared <= context.maxBodyBytes {
            // One allocation for the whole body instead of a chain of copies as it grows.
            state.request.body.reserveCapacity(declared)
        }
        if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: chunkSize) { bytes in
                state.request.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: chunkSize))
            }
        }
        return .YES
    }
    if let job = state.job {
        // Resumed: the pool (or a stop) has the answer, ready to queue.
        state.job = nil
        state.answered = true
        guard let prepared = job.takeAnswer() else {
            state.closing = true
            return queue(context.responder.shuttingDown(state.request), on: connection, closing: true)
        }
        return prepared.queue(on: connection)
    }
    if state.answered { return .YES }
    if pg_mhd_trailer_count(connection) > 0 {
        state.answered = true
        state.closing = true
        let violation = FramingViolation(.malformedChunk, "trailer fields after a chunked body are not accepted")
        return queue(context.responder.refused(violation, remoteAddress: state.request.remoteAddress), on: connection,
                     closing: true)
    }
    if state.overLimit {
        state.answered = true
        state.closing = true
        return queue(context.responder.bodyTooLarge(state.request, limit: context.maxBodyBytes), on: connection)
    }
    if context.responder.runsLong(state.request), let job = context.runOnPool(state.request, connection: connection) {
        state.job = job
        state.request.body = []
        return .YES
    }
    let response = context.responder.respond(to: state.request)
    if let handOff = response.handOff {
        // The rest waits on another host: never on this thread.
        if let job = context.runUpstream(handOff, request: state.request, connection: connection) {
            state.job = job
            state.request.body = []
            return .YES
        }
        state.answered = true
        state.closing = true
        return queue(context.responder.shuttingDown(state.request), on: connection, closing: true)
    }
    state.answered = true
    return queue(response, on: connection, closing: closesAfter(state.request))
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestContext, termination in
    guard let cls, let requestContext, let pointer = requestContext.pointee else { return }
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
    requestContext.pointee = nil
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let connectionState = connection.flatMap(ConnectionState.of)
    let replaced = connectionState?.libraryAnswerReplaced ?? false
    connectionState?.phase = .requestLine
    connectionState?.libraryAnswerReplaced = false
    if replaced { connectionState?.countable = false }
    if state.headSeen {
        context.inFlight.subtract(1, ordering: .relaxed)
        if let connectionState {
            if state.closing || !state.answered {
                connectionState.countable = false
            } else {
                connectionState.finishedBytes += Int64(state.headBytes) + Int64(state.bodyBytes)
            }
        }
        // The connection stays open for another request: its head gets the first head's deadline.
        if let connection, termination == .REQUEST_TERMINATED_COMPLETED_OK, state.answered, !state.closing {
            let fd = pg_mhd_connection_fd(connection)
            if fd >= 0 { context.gate.withLock { $0 }?.awaitHead(fd) }
        }
        // The body and the answer are freed now: a worker trims the heap once the pool
        // has nothing to do (at once if it is idle already).
        if state.bodyBytes >= ServerContext.bigBodyBytes {
            context.trim.want()
            if context.pool.load == 0 { _ = context.pool.submit {} }
        }
    } else if let connection, !replaced {
        connectionState?.countable = false
        // libmicrohttpd dropped this request before its head was whole (the client
        // closed, or the idle timeout), or answered it by itself where the answer was
        // not replaced. Logged with the status it sent (0: none).
        context.responder.answeredByLibrary(status: Int(pg_mhd_status(connection)), remoteAddress: clientAddress(connection))
    }
}

/// MHD_OPTION_NOTIFY_CONNECTION: each connection gets its `ConnectionState` as socket
/// context when libmicrohttpd takes it, and gives it back when it is closed.
private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let socketContext else { return }
    if code == .CONNECTION_NOTIFY_STARTED {
        let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        socketContext.pointee = Unmanaged.passRetained(ConnectionState(server: server)).toOpaque()
    } else if code == .CONNECTION_NOTIFY_CLOSED, let pointer = socketContext.pointee {
        let state = Unmanaged<ConnectionState>.fromOpaque(pointer).takeRetainedValue()
        socketContext.pointee = nil
        // Before libmicrohttpd closes the descriptor (MHD_cleanup_connections, 0.9.75), so
        // the gate never shuts down a number another connection was given since.
        if let connection, let gate = state.server.gate.withLock({ $0 }) {
            let fd = pg_mhd_connection_fd(connection)
            if fd >= 0 { gate.forgetHead(fd) }
        }
        // libmicrohttpd closes without an answer, and without any callback, when a later
        // request line has no space or starts with one, and at the idle timeout while a
        // request line is unfinished; the client closing mid-line looks the same. Bytes
        // received beyond the finished requests tell those apart from a plain close.
        if let connection, state.countable, state.phase == .requestLine, !state.libraryAnswerReplaced {
            let fd = pg_mhd_connection_fd(connection)
            let received = fd >= 0 ? pg_tcp_bytes_received(fd) : -1
            if received > state.finishedBytes {
                state.server.responder.answeredByLibrary(status: 0, remoteAddress: clientAddress(connection))
            }
        }
    }
}

/// libmicrohttpd is about to answer by itself (see mhd_own_answers.c): the responder's
/// problem is written on the socket instead, `Connection: close`, the writing side shut,
/// and libmicrohttpd closes the connection without sending anything. The socket stays
/// open a moment longer in the gate, which drops what the client still sends, so the
/// close does not reset the connection before the answer is read.
private let libraryAnswer: pg_library_answer_handler = { connection, status in
    guard let connection, let state = ConnectionState.of(connection),
          let violation = libraryViolation(status: Int(status), phase: state.phase, connection: connection) else { return 0 }
    let fd = pg_mhd_connection_fd(connection)
    guard fd >= 0 else { return 0 }
    let server = state.server
    let answer = serialize(server.responder.refused(violation, remoteAddress: clientAddress(connection)), closing: true,
                           now: server.clock.wallSeconds())
    // Nothing of the previous answer is still queued (libmicrohttpd reads the next
    // request only once it has been sent), so these bytes go out in order. One try:
    // a client that does not read gets the close alone.
    answer.withUnsafeBytes { raw in
        _ = send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
    shutdown(fd, Int32(SHUT_WR))
    let kept = fcntl(fd, F_DUPFD_CLOEXEC, 0)
    if kept >= 0 { server.drainThenClose(kept) }
    state.libraryAnswerReplaced = true
    return 1
}

/// What libmicrohttpd refused, from its status and how far the request had come. Its
/// own answers come from transmit_error_response_len (connection.c, 0.9.75): 400 for a
/// request line whose version is not `HTTP/d.d`, a header line without a colon, a
/// Content-Length that is not digits, a bad chunk; 413 for a Content-Length or chunk
/// size over 2^64; 414 and 431 for a request line or head over its 64 KiB; 505 for a
/// version other than 1.x. The 500 it sends when an application leaves upload data
/// unread cannot happen here (every chunk is consumed) and is left as it is.
private func libraryViolation(status: Int, phase: ConnectionState.Phase, connection: OpaquePointer) -> FramingViolation? {
    switch status {
    case 414:
        return FramingViolation(.requestLineTooLong, "the request line does not fit in 64 KiB")
    case 431:
        return FramingViolation(.headersTooLarge, "the request head does not fit in 64 KiB")
    case 505:
        return FramingViolation(.httpVersionNotSupported, "only HTTP/1.1 and HTTP/1.0 are served")
    case 400, 413:
        switch phase {
        case .requestLine:
            return FramingViolation(.malformedRequestLine, "the request line does not end with an HTTP version")
        case .headerLines:
            if MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") != nil {
                return FramingViolation(.invalidContentLength, "Content-Length must be 1 to 18 plain decimal digits")
            }
            return FramingViolation(.malformedHeader, "a header line has no colon")
        case .body:
            return FramingViolation(.malformedChunk,
                                    "the chunked body is malformed: a chunk size that is not hexadecimal, a chunk not followed by CRLF, or a trailer line without a colon")
        }
    default:
        return nil
    }
}

private func clientAddress(_ connection: OpaquePointer) -> String {
    var address = [CChar](repeating: 0, count: 64)
    pg_mhd_client_address(connection, &address, address.count)
    return String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The layout check's verdict as a violation (see `pg_mhd_head_layout_problem`).
private func layoutViolation(_ problem: Int32) -> FramingViolation? {
    switch problem {
    case 0: nil
    case 2: FramingViolation(.invalidRequestTarget, "the request target has a byte outside visible ASCII")
    case 1, 3, 10, 11: FramingViolation(.malformedRequestLine, "the request line must be 'METHOD SP target SP HTTP/1.1' with single spaces")
    case 4: FramingViolation(.bareLineFeed, "the request line does not end with CRLF")
    case 5: FramingViolation(.obsoleteLineFolding, "a header line is folded or malformed")
    case 6: FramingViolation(.controlCharacter, "a header line holds a NUL or ends with a bare LF")
    default: FramingViolation(.bareLineFeed, "the head does not end with CRLF CRLF")
    }
}

private func readHead(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?) -> HTTPRequest {
    var collected = CollectedValues()
    withUnsafeMutablePointer(to: &collected) { pointer in
        _ = MHD_get_connection_values(connection, .HEADER_KIND, collectValue, pointer)
        pointer.pointee.headersDone = true
        _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectValue, pointer)
    }
    return HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: collected.query,
        headers: collected.headers,
        body: [],
        remoteAddress: clientAddress(connection))
}

private struct CollectedValues {
    var headers: [(name: String, value: String)] = []
    var query: [(name: String, value: String)] = []
    var headersDone = false
}

private let collectValue: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collected = cls.assumingMemoryBound(to: CollectedValues.self)
    let name = String(cString: key)
    let text = value.map { String(cString: $0) } ?? ""
    if collected.pointee.headersDone {
        collected.pointee.query.append((name, text))
    } else {
        // libmicrohttpd keeps trailing whitespace; it is not part of the value (RFC 9110 §5.5).
        var value = Substring(text)
        while let last = value.utf8.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        collected.pointee.headers.append((name.lowercased(), String(value)))
    }
    return .YES
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer, closing: Bool = false) -> MHD_Result {
    guard let prepared = PreparedResponse(response, closing: closing) else { return .NO }
    return prepared.queue(on: connection)
}

/// A libmicrohttpd response object, built (and its body copied) on whichever thread
/// makes it: a worker makes the answer of a long request, so the I/O thread that
/// resumes the connection only queues it. Destroyed with its owner.
final class PreparedResponse: @unchecked Sendable {
    // @unchecked: the handle is only read after init; libmicrohttpd reference-counts
    // response objects and allows queueing them from any thread.
    private let handle: OpaquePointer
    let status: Int
    let bodyBytes: Int

    init?(_ response: HTTPResponse, closing: Bool) {
        var headers = response.headers
        if closing {
            headers.removeAll { $0.name.lowercased() == "connection" }
            headers.append(("Connection", "close"))
        }
        let made: OpaquePointer? = response.body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let made else { return nil }
        for header in headers {
            _ = MHD_add_response_header(made, header.name, header.value)
        }
        handle = made
        status = response.status
        bodyBytes = response.body.count
    }

    deinit { MHD_destroy_response(handle) }

    func queue(on connection: OpaquePointer) -> MHD_Result {
        pg_mhd_queue_response(connection, UInt32(clamping: status), handle)
    }
}

/// The checks that can still be made once libmicrohttpd has parsed a head: the same
/// framing rules as the raw check, the version, and names and values byte by byte.
/// This is what guards the second and later requests of a kept-alive connection.
private func parsedHeadViolation(_ request: HTTPRequest, version: String, check: RequestHeadCheck) -> FramingViolation? {
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return version.hasPrefix("HTTP/")
            ? FramingViolation(.httpVersionNotSupported, "only HTTP/1.1 and HTTP/1.0 are served")
            : FramingViolation(.malformedRequestLine, "the request line does not end with an HTTP version")
    }
    if !request.path.hasPrefix("/") && request.path != "*" {
        return FramingViolation(.invalidRequestTarget, "the request target must be a path starting with '/'")
    }
    for (index, header) in request.headers.enumerated() {
        if header.name.isEmpty || !header.name.utf8.allSatisfy(isTokenByte) {
            return FramingViolation(.malformedHeader, "header \(index + 1): the name is not a token")
        }
        if header.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return FramingViolation(.controlCharacter, "header \(index + 1) has a control byte in its value")
        }
    }
    if request.query.count > check.maxQueryParameters {
        return FramingViolation(.tooManyQueryParameters,
                                "\(request.query.count) query parameters; at most \(check.maxQueryParameters)")
    }
    return RequestHeadCheck.framingRules(headers: request.headers, version: version)
}

/// The bytes of a whole response, for answers written outside libmicrohttpd.
func serialize(_ response: HTTPResponse, closing: Bool, now: Double) -> [UInt8] {
    var head = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\nDate: \(httpDate(now))\r\n"
    for (name, value) in response.headers {
        let lower = name.lowercased()
        if lower == "content-length" || lower == "connection" { continue }
        head += "\(name): \(value)\r\n"
    }
    head += "Content-Length: \(response.body.count)\r\n"
    if closing { head += "Connection: close\r\n" }
    head += "\r\n"
    return Array(head.utf8) + response.body
}

/// `Tue, 01 Dec 2026 08:56:56 GMT` (RFC 9110 §5.6.7), as libmicrohttpd writes it.
func httpDate(_ wallSeconds: Double) -> String {
    var now = time_t(wallSeconds.rounded(.down))
    var parts = tm()
    gmtime_r(&now, &parts)
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 400: "Bad Request"
    case 408: "Request Timeout"
    case 413: "Content Too Large"
    case 414: "URI Too Long"
    case 431: "Request Header Fields Too Large"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    default: "Error"
    }
}

extension HTTPServer {
    /// The libmicrohttpd loaded at run time (`0.9.75`), for `pushgate version`.
    public static var libraryVersion: String { MHD_get_version().map { String(cString: $0) } ?? "unknown" }
}

extension HTTPServer: Service {
    public var name: String { "http" }

    /// The server as a service: it listens from `init`; this waits until cancelled, then
    /// stops as `shutdown` does with the group's deadline (`StopDeadline.current`; none: at
    /// once), polling without holding a thread.
    public func run() async throws {
        let group = StopDeadline.current
        let clock = context.clock
        while !Task.isCancelled { try? await clock.sleep(for: .seconds(3600)) }
        beginShutdown()
        let deadline = group?.monotonicSeconds ?? clock.monotonicSeconds()
        // A task of its own: this one is cancelled, and its sleeps would end at once.
        await Task { [context] in
            while context.inFlight.load(ordering: .relaxed) > 0 && clock.monotonicSeconds() < deadline {
                try? await clock.sleep(for: .milliseconds(5))
            }
        }.value
        stopDaemon()
    }
}
