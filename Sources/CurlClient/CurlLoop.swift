import APNsCore
internal import CCurl
internal import CCurlShims
import Timing
#if canImport(Glibc)
import Glibc
#endif

/// The transport thread's state: the multi handle, the transfers in flight, the queue.
/// Everything here is touched only by that one thread (hence `@unchecked Sendable`, which
/// is needed only to hand it to the thread once).
///
/// What can happen to a request, and what it becomes:
/// * an answer (a status line arrived) always wins, even if its deadline passed while the
///   answer was read or the stream broke afterwards;
/// * its deadline (armed when it is written: time waiting in the queue, for a stream or for
///   a connection is not taken from it) passes with no answer: the stream alone is
///   cancelled (the connection and the other streams carry on) and it ends as `timeout`;
///   one libcurl holds unwritten for longer than a connect timeout and a deadline goes back
///   to the queue (not failed); but when its connection answered nothing for half a
///   deadline while it and at least one more request sent that long ago wait on it, the
///   connection is taken to be dead (silent) and closed, and its other streams go the way
///   of a lost connection;
/// * REFUSED_STREAM, or a GOAWAY that did not cover it: the server did not process it, and
///   libcurl sends it again on a fresh connection; every send is counted (the pre-request
///   callback) and past `maxResends` it ends as `unanswered`;
/// * any other stream reset after the whole request went out: `streamReset` with the
///   HTTP/2 error code, for the client's retry policy to decide (the outcome is unknown);
/// * the connection was lost: parked, sent again after a reconnect backoff, counted;
/// * no connection could be made: parked without counting (nothing was sent), until the
///   circuit breaker opens; then everything queued ends as `unreachable`, new requests too,
///   while a connect-only probe with backoff looks for APNs; the first that connects closes it.
final class CurlLoop: @unchecked Sendable {
    private let multi: CurlMultiHandle
    private let settings: TransportSettings
    private let statistics: TransportStatistics
    private let gate: StartGate
    private let maxInFlight: Int
    private var active = ActiveTransfers()
    /// Easy handles (each with its transfer) not in use, kept for the next requests.
    private var idleHandles: [CurlTransfer] = []
    private var waiting = JobQueue()
    /// Jobs sent back after a lost or failed connection, released at `reconnectAt`.
    private var parked: [TransportJob] = []
    private var reconnectAt: UInt64 = 0
    private var consecutiveConnectionLosses = 0
    private var breaker: CircuitBreaker
    private var lastConnectError = ""
    /// No deadline among the active transfers passes before this (moved forward by the
    /// transfers' pre-request callbacks, which arm the deadlines).
    private let deadlines = DeadlineSweep()
    private var nextDeadlineCheck: UInt64 {
        get { deadlines.next }
        set { deadlines.next = newValue }
    }
    /// `Withdrawal.epoch` when the queue was last looked through for withdrawn requests.
    private var seenWithdrawals = Withdrawal.epoch
    private var nextUpkeep: UInt64 = 0
    private var connectionLimit = 0
    /// When a transfer last finished (or the stall valve last opened).
    private var lastProgress: UInt64 = 0
    /// When an answer last arrived on each connection (by its local port), to tell a
    /// silent connection (`silentConnections`).
    private var lastAnswerOnPort = AnswerTimes()
    static let stallMilliseconds: UInt64 = 200
    /// For a connection (TCP and TLS), within the request's deadline.
    private var connectTimeoutMilliseconds: Int { min(settings.timeoutMilliseconds, 5_000) }
    /// How long libcurl may hold a request unwritten (waiting for a stream or a connection)
    /// before it goes back to the queue: a stall behind other requests ends within a
    /// deadline, a connection attempt within its timeout.
    private var unwrittenMilliseconds: UInt64 { UInt64(connectTimeoutMilliseconds + settings.timeoutMilliseconds) }
    /// How often a request may go back to the queue unwritten before it ends `notStarted`:
    /// a server that never frees a stream must not hold a device forever.
    static let maxUnwrittenReturns = 3

    private let clock: any TimeSource
    /// After a lost connection: 25 ms, doubling per loss in a row, at most 2 s.
    static let reconnectBackoff = Backoff(initial: .milliseconds(25), maximum: .seconds(2))

    init(multi: CurlMultiHandle, settings: TransportSettings, statistics: TransportStatistics, gate: StartGate,
         clock: any TimeSource) {
        self.multi = multi
        self.gate = gate
        self.clock = clock
        self.settings = settings
        self.statistics = statistics
        breaker = CircuitBreaker(threshold: settings.breakerThreshold)
        maxInFlight = max(1, settings.connections * settings.maxConcurrentStreams)
        let m = multi.pointer
        _ = pg_curl_multi_setopt_long(m, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        setStreamLimit(settings.maxConcurrentStreams)
        setConnectionLimit(settings.connections)
    }

    /// Streams per connection libcurl may open now. A server may refuse streams opened
    /// before its SETTINGS arrived (RFC 9113 §5.1.2), on every new connection; so a
    /// request's first refusal halves this and each answer adds one back, up to
    /// `maxConcurrentStreams`. The same request refused again does not: one request the
    /// server always refuses must not shrink the window of all the others.
    private var streamLimit = 0
    /// What libcurl was last given (`CURLMOPT_MAX_CONCURRENT_STREAMS`). A refusal is seen
    /// in the pre-request callback, where libcurl refuses `curl_multi_setopt`
    /// (CURLM_RECURSIVE_API_CALL): the new limit is handed over after `curl_multi_perform`.
    private var appliedStreamLimit = 0

    /// Outside libcurl's callbacks only.
    private func setStreamLimit(_ limit: Int) {
        streamLimit = limit
        applyStreamLimit()
    }

    private func applyStreamLimit() {
        guard streamLimit != appliedStreamLimit else { return }
        appliedStreamLimit = streamLimit
        _ = pg_curl_multi_setopt_long(multi.pointer, CURLMOPT_MAX_CONCURRENT_STREAMS, streamLimit)
    }

    /// Made once, not a closure per request.
    private lazy var resendHandler: (Bool) -> Void = { [unowned self] first in self.streamRefused(first: first) }

    /// In the pre-request callback: the limit is applied after `curl_multi_perform`.
    private func streamRefused(first: Bool) {
        statistics.values.withLock { $0.libcurlResends += 1 }
        if first { streamLimit = max(1, streamLimit / 2) }
    }

    private func setConnectionLimit(_ limit: Int) {
        connectionLimit = limit
        _ = pg_curl_multi_setopt_long(multi.pointer, CURLMOPT_MAX_HOST_CONNECTIONS, limit)
        _ = pg_curl_multi_setopt_long(multi.pointer, CURLMOPT_MAX_TOTAL_CONNECTIONS, limit)
    }

    /// libcurl retires a connection after a refused stream or a GOAWAY but keeps it, and
    /// counts it against the limit, until its last stream ends, which for a hung stream is
    /// its deadline. Requests waiting for a connection behind it would all miss theirs.
    /// So when requests have waited `stallMilliseconds` for a connection and nothing has
    /// finished meanwhile, one more connection is allowed (at most `connections` more);
    /// the limit goes back to `connections` once the extra ones have closed. A server whose
    /// stream limit is merely low keeps answering, so it does not get extra connections.
    private func relieveStall(now: UInt64) {
        if connectionLimit > settings.connections, statistics.liveConnections <= settings.connections {
            setConnectionLimit(settings.connections)
        }
        guard now >= lastProgress + Self.stallMilliseconds, connectionLimit < 2 * settings.connections,
              active.transfers.contains(where: { $0.job.sends == 0 && $0.startedAt + Self.stallMilliseconds <= now }) else { return }
        lastProgress = now
        setConnectionLimit(connectionLimit + 1)
        statistics.values.withLock { $0.stallsRelieved += 1 }
    }

    /// Taken from the inbox each pass; kept to reuse its storage.
    private var incoming: [TransportJob] = []

    /// The requests handed over since the last pass, into the queue; whether to stop.
    private func takeInbox(_ inbox: TransportInbox) -> Bool {
        let stopping = inbox.take(jobs: &incoming)
        for job in incoming { waiting.push(job) }
        incoming.removeAll(keepingCapacity: true)
        return stopping
    }

    func run(inbox: TransportInbox) {
        while true {
            if takeInbox(inbox) { break }
            if gate.isClosed { refuseQueued() }
            if Withdrawal.epoch != seenWithdrawals { takeBackWithdrawn() }
            var now = clock.monotonicMilliseconds()
            if !parked.isEmpty, now >= reconnectAt {
                for job in parked { waiting.push(job) }
                parked.removeAll(keepingCapacity: true)
            }
            while active.count < maxInFlight, let job = waiting.pop() { start(job, now: now) }
            var running: Int32 = 0
            curl_multi_perform(multi.pointer, &running)
            if streamLimit != appliedStreamLimit { applyStreamLimit() }
            collectFinished()
            now = clock.monotonicMilliseconds()
            if now >= nextDeadlineCheck { cancelOverdue(now: now) }
            if now >= nextUpkeep { upkeep(now: now) }
            if probe == nil, breaker.probeDue(now: now) { startProbe() }
            if !active.isEmpty, now >= lastProgress + Self.stallMilliseconds || connectionLimit > settings.connections {
                relieveStall(now: now)
            }
            if active.count < maxInFlight, !waiting.isEmpty { continue }
            var wait = 1000
            if !parked.isEmpty { wait = min(wait, max(0, Int(reconnectAt) - Int(now))) }
            if nextDeadlineCheck != .max { wait = min(wait, max(1, Int(nextDeadlineCheck) - Int(now))) }
            if breaker.isOpen, probe == nil { wait = min(wait, max(1, Int(breaker.probeAt) - Int(now))) }
            if !active.isEmpty || wait > 0, inbox.mayWait(wantsWork: active.count < maxInFlight) {
                curl_multi_poll(multi.pointer, nil, 0, Int32(wait), nil)
            }
        }
        cancelEverything()
    }

    private func start(_ job: TransportJob, now: UInt64) {
        guard !gate.isClosed else {
            refuse(job)
            return
        }
        guard !job.request.isWithdrawn else {
            job.finish(.failure(job.request.withdrawnFailure))
            return
        }
        guard !breaker.isOpen else {
            job.finish(.failure(unreachable))
            return
        }
        let transfer: CurlTransfer
        if let reused = idleHandles.popLast() {
            transfer = reused
        } else if let fresh = CurlTransfer(settings: settings, statistics: statistics, gate: gate, clock: clock,
                                           deadlines: deadlines, onResend: resendHandler) {
            transfer = fresh
        } else {
            job.finish(.failure(TransportFailure(.transportError, "libcurl could not create an easy handle")))
            return
        }
        transfer.begin(job, baseURL: settings.baseURL, now: now)
        // libcurl arms a timer for a transfer's connect timeout whether it opens a connection
        // or reuses one (~800 instructions a request): so it is set only on a transfer that
        // may open one, while fewer are open than allowed. One that waits for a connection
        // which then closes, and opens the next, goes back to the queue after
        // `unwrittenMilliseconds` (and gets a connect timeout when it starts again).
        transfer.easy.setConnectTimeout(statistics.liveConnections < connectionLimit ? connectTimeoutMilliseconds : 0)
        let unwrittenUntil = now + unwrittenMilliseconds
        if unwrittenUntil < nextDeadlineCheck { nextDeadlineCheck = unwrittenUntil }
        if active.isEmpty { lastProgress = now }
        guard curl_multi_add_handle(multi.pointer, transfer.easy.handle.pointer) == CURLM_OK else {
            release(transfer)
            job.finish(.failure(TransportFailure(.transportError, "libcurl refused the request")))
            return
        }
        active.insert(transfer)
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        var now: UInt64?
        while let message = curl_multi_info_read(multi.pointer, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            if let probe, easy == probe.handle.pointer {
                probeFinished(probe, result: message.pointee.data.result)
                continue
            }
            guard let transfer = CurlTransfer.of(easy), active.remove(transfer) else { continue }
            let finishedAt = now ?? clock.monotonicMilliseconds()
            now = finishedAt
            end(transfer, result: message.pointee.data.result, now: finishedAt)
        }
    }

    /// A transfer libcurl is done with (or one `cancelOverdue` ends), already out of `active`.
    private func end(_ transfer: CurlTransfer, result: CURLcode, now: UInt64) {
        let status = transfer.responseCode
        let uploadedAll = status == 0 && transfer.uploadedWholeBody  // asked only when there is no answer
        let detail = status > 0 ? "" : transfer.easy.errorText
        lastProgress = now
        if status > 0 { lastAnswerOnPort.record(transfer.localPort, at: now) }
        curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
        finish(transfer, result: result, status: status, uploadedAll: uploadedAll, detail: detail)
        release(transfer)
    }

    /// A transfer whose request is done with (answered, failed or taken back): its handle
    /// goes back to the pool.
    private func release(_ transfer: CurlTransfer) {
        transfer.end()
        idleHandles.append(transfer)
    }

    /// Cancels the streams whose deadline passed with no answer started, just those: the
    /// connection stays (libcurl resets the stream). Runs after `curl_multi_perform`, so
    /// an answer already waiting in the socket was read first and wins.
    private func cancelOverdue(now: UInt64) {
        // libcurl hands a stream the frames another transfer read from the shared socket
        // on the next pass over the transfers: one more pass, so those answers win too.
        var running: Int32 = 0
        curl_multi_perform(multi.pointer, &running)
        collectFinished()
        var next = UInt64.max
        var overdue: [CurlTransfer] = []
        var stalled: [CurlTransfer] = []
        var unwritten: [CurlTransfer] = []
        for transfer in active.transfers {
            if transfer.job.sends == 0 {
                // Never written: no deadline yet; back to the queue if libcurl holds it too long.
                let end = transfer.startedAt + unwrittenMilliseconds
                if end <= now { unwritten.append(transfer) } else { next = min(next, end) }
            } else if !transfer.answerStarted {
                if transfer.job.deadline <= now { overdue.append(transfer) } else { next = min(next, transfer.job.deadline) }
            } else {
                // `settings.stalledAnswerMilliseconds`, swept here: libcurl's per-transfer
                // timeout would cost a timer per request (~700 instructions).
                let end = transfer.job.deadline.addingReportingOverflow(UInt64(settings.stalledAnswerMilliseconds))
                let at = end.overflow ? UInt64.max : end.partialValue
                if at <= now { stalled.append(transfer) } else { next = min(next, at) }
            }
        }
        nextDeadlineCheck = next
        for transfer in unwritten {
            active.remove(transfer)
            curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
            let job: TransportJob = transfer.job
            release(transfer)
            job.unwrittenReturns += 1
            if job.unwrittenReturns > Self.maxUnwrittenReturns {
                // Nothing of it reached APNs: given back (serve) or "not sent" (send), never failed.
                job.finish(.failure(TransportFailure(.notStarted, "not sent: no stream was free to write it on in \(job.unwrittenReturns) tries of \(unwrittenMilliseconds) ms")))
            } else {
                waiting.push(job)
            }
        }
        // An answer that started and stalled: its status line wins (`finish`), as it would
        // have at libcurl's own timeout.
        for transfer in stalled {
            active.remove(transfer)
            end(transfer, result: CURLE_OPERATION_TIMEDOUT, now: now)
        }
        for port in silentConnections(among: overdue, now: now) { closeSilentConnection(localPort: port) }
        for transfer in overdue {
            active.remove(transfer)
            curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
            transfer.job.finish(.failure(overdueFailure(transfer)))
            release(transfer)
        }
    }

    /// What a request whose deadline passed with no answer ends as: `timeout`, or, when
    /// libcurl had sent it again after a refusal (REFUSED_STREAM, or a GOAWAY that did not
    /// cover it), `unanswered`, which says so.
    private func overdueFailure(_ transfer: CurlTransfer) -> TransportFailure {
        let within = "no answer within \(settings.timeoutMilliseconds) ms of its last write (the stream was cancelled)"
        guard transfer.resends > 0 else { return TransportFailure(.timeout, within) }
        return TransportFailure(.unanswered, "sent \(transfer.job.sends) times and never answered: the server refused the stream "
            + "(REFUSED_STREAM, or a GOAWAY before it) \(transfer.resends) times, then \(within)")
    }

    /// A silent connection (`silentConnections`): a peer gone quiet (a middlebox dropped the flow, a hung server). libcurl cannot
    /// tell (its HTTP/2 PING, in 8.x, is never checked for an acknowledgement), and would
    /// keep giving it new requests. Shutting the socket down makes libcurl see it closed:
    /// its other streams fail as on a lost connection (parked, sent again within the send
    /// bound) and the next requests get a new connection. libcurl still closes the socket.
    /// The connections of `overdue` requests that answered nothing for half a deadline while
    /// at least two requests sent on them that long ago wait: one hung stream on a
    /// connection with nothing else to answer is no sign (only a PING could tell), two
    /// that a connection leaves unanswered with no other answer on it are.
    private func silentConnections(among overdue: [CurlTransfer], now: UInt64) -> Set<Int32> {
        let window = UInt64(settings.timeoutMilliseconds / 2)
        let quiet = Set(overdue.compactMap { transfer -> Int32? in
            let port = transfer.localPort
            guard transfer.job.sends > 0, port > 0, lastAnswerOnPort.time(of: port) + window <= now else { return nil }
            return port
        })
        guard !quiet.isEmpty else { return [] }
        var waiting: [Int32: Int] = [:]
        for transfer in active.transfers where transfer.job.sends > 0 && !transfer.answerStarted
            && quiet.contains(transfer.localPort) && transfer.sentAt + window <= now {
            waiting[transfer.localPort, default: 0] += 1
        }
        return Set(waiting.filter { $0.value >= 2 }.keys)
    }

    private func closeSilentConnection(localPort: Int32) {
        lastAnswerOnPort.forget(localPort)
        let sockets = statistics.values.withLock { $0.sockets }
        guard let socket = sockets.first(where: { Self.localPort(of: $0) == localPort }),
              shutdown(socket, Int32(SHUT_RDWR)) == 0 else { return }
        statistics.values.withLock { $0.silentConnectionsClosed += 1 }
    }

    private static func localPort(of socket: Int32) -> Int32? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) == 0 }
        }
        guard found else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int32(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int32(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            return nil
        }
    }

    /// HTTP/2 PING on connections quiet for `upkeepIntervalMilliseconds`. libcurl 8.x does
    /// it for every connection of the multi handle the given transfer is in; 7.88's
    /// curl_easy_upkeep only serves curl_easy_perform and does nothing here (TCP keepalive
    /// and libcurl's liveness check before reusing a connection remain).
    private func upkeep(now: UInt64) {
        nextUpkeep = now + UInt64(max(1_000, settings.upkeepIntervalMilliseconds / 2))
        if let transfer = active.transfers.first { _ = curl_easy_upkeep(transfer.easy.handle.pointer) }
    }

    private func finish(_ transfer: CurlTransfer, result: CURLcode, status: Int, uploadedAll: Bool, detail: String) {
        let job: TransportJob = transfer.job
        if status > 0 {
            // An answer arrived (even if the stream broke afterwards): never send it again.
            breakerSucceeded()
            consecutiveConnectionLosses = 0
            if streamLimit < settings.maxConcurrentStreams { setStreamLimit(streamLimit + 1) }
            // A refused key stops here, before the next requests are started (rare: a 403).
            if status == 403, let key = job.request.key {
                key.holder.refusedOnTheWire(status: status, body: transfer.responseBody)
            }
            job.finish(.response(transfer.takeResponse(status: status)))
            return
        }
        let message = curlMessage(result, detail)
        if job.sends > 0 { breakerSucceeded() }  // it reached a server
        switch result {
        case CURLE_ABORTED_BY_CALLBACK where transfer.abort == .stopping:
            refuse(job)
        case CURLE_ABORTED_BY_CALLBACK where transfer.abort == .withdrawn:
            job.finish(.failure(job.request.withdrawnFailure))
        case CURLE_ABORTED_BY_CALLBACK where transfer.abort == .sendLimit:
            job.finish(.failure(TransportFailure(.unanswered, "sent \(job.sends) times and never answered (the server refused the stream, "
                + "or the connection ended first); not sent again")))
        case CURLE_OPERATION_TIMEDOUT where job.sends == 0, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST:
            // Nothing was sent: back to the queue after a backoff, as long as the breaker allows.
            noteConnectFailure(message)
            if breaker.isOpen {
                job.finish(.failure(unreachable))
            } else {
                park(job, lostConnection: false)
            }
        case CURLE_OPERATION_TIMEDOUT:
            job.finish(.failure(TransportFailure(.timeout, "no answer within \(settings.timeoutMilliseconds) ms")))
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            noteConnectFailure(message)
            job.finish(.failure(breaker.isOpen ? unreachable : TransportFailure(.tlsFailed, message)))
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_OUT_OF_MEMORY:
            job.finish(.failure(TransportFailure(.transportError, message)))
        case CURLE_HTTP2_STREAM where !uploadedAll:
            // Reset before the server had the whole request: it cannot have been processed.
            park(job, lostConnection: false)
        case CURLE_HTTP2_STREAM:
            let code = Self.http2ErrorCode(in: detail) ?? 0
            job.finish(.failure(TransportFailure(.streamReset, "the server reset the stream with HTTP/2 error "
                + "\(Self.http2ErrorName(code)) (0x\(String(code, radix: 16))) after receiving the whole request; "
                + "it may have been delivered", http2ErrorCode: code)))
        default:
            // The connection broke before an answer (libcurl has already tried once more
            // on a fresh connection when it was a reused one).
            guard job.sends < settings.maxResends + 1 else {
                if detail.hasPrefix("Connection died, tried") {  // libcurl's own re-sends ran out
                    job.finish(.failure(TransportFailure(.unanswered, "sent \(job.sends) times and never answered (the server "
                        + "refused the stream, or the connection ended first); not sent again")))
                    return
                }
                job.finish(.failure(TransportFailure(.connectionLost, "\(message) (sent \(job.sends) times; "
                    + "the connection was lost before an answer each time, \(job.reconnects) reconnects)")))
                return
            }
            park(job, lostConnection: true)
        }
    }

    private var unreachable: TransportFailure {
        TransportFailure(.unreachable, "cannot reach APNs at \(settings.baseURL): \(lastConnectError)")
    }

    /// Back to the queue after the reconnect backoff; its next write arms a fresh deadline.
    private func park(_ job: TransportJob, lostConnection: Bool) {
        if lostConnection { noteConnectionLoss() }
        job.reconnects += 1
        job.deadline = .max
        statistics.values.withLock { $0.requeued += 1 }
        parked.append(job)
    }

    /// All requests that fail together (one GOAWAY, one dropped connection) count once.
    private func noteConnectionLoss() {
        let now = clock.monotonicMilliseconds()
        guard now >= reconnectAt else { return }
        consecutiveConnectionLosses += 1
        statistics.values.withLock { $0.connectionFailures += 1 }
        reconnectAt = now + UInt64(Self.reconnectBackoff.delay(afterFailures: consecutiveConnectionLosses, unit: 0).inMilliseconds)
    }

    /// A connection attempt failed (refused, timed out, TLS): counts towards the breaker,
    /// once per reconnect window, like connection losses.
    private func noteConnectFailure(_ message: String) {
        lastConnectError = message
        let now = clock.monotonicMilliseconds()
        // While open, only probes move the breaker (requests that were already on their
        // way when it opened do not push the next probe back).
        guard !breaker.isOpen, now >= reconnectAt else {
            statistics.values.withLock { $0.lastError = message }
            return
        }
        noteConnectionLoss()
        if breaker.recordFailure(now: now) {
            let since = clock.secondsSince1970()
            statistics.values.withLock { $0.unreachableSince = since; $0.lastError = message }
            for job in parked { job.finish(.failure(unreachable)) }
            parked.removeAll()
            while let job = waiting.pop() { job.finish(.failure(unreachable)) }
        } else {
            statistics.values.withLock { $0.lastError = message }
        }
    }

    /// While the breaker is open: a connection (TCP + TLS, `CURLOPT_CONNECT_ONLY`) to APNs
    /// with nothing sent on it, so finding out whether APNs is back costs no request.
    private var probe: PooledEasy?

    private func startProbe() {
        guard let easy = PooledEasy(settings: settings, statistics: statistics) else { return }
        let e = easy.handle.pointer
        easy.setConnectTimeout(connectTimeoutMilliseconds)
        _ = pg_curl_easy_setopt_string(e, CURLOPT_URL, settings.baseURL + "/")
        _ = pg_curl_easy_setopt_long(e, CURLOPT_CONNECT_ONLY, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TIMEOUT_MS, connectTimeoutMilliseconds)
        guard curl_multi_add_handle(multi.pointer, e) == CURLM_OK else { return }
        probe = easy
    }

    private func probeFinished(_ easy: PooledEasy, result: CURLcode) {
        curl_multi_remove_handle(multi.pointer, easy.handle.pointer)
        probe = nil  // the handle, and with it the probe's connection, goes away here
        if result == CURLE_OK {
            breakerSucceeded()
        } else {
            let message = curlMessage(result, easy.errorText)
            lastConnectError = message
            breaker.recordFailure(now: clock.monotonicMilliseconds())
            statistics.values.withLock { $0.lastError = message }
        }
    }

    private func breakerSucceeded() {
        guard breaker.consecutiveFailures > 0 || breaker.isOpen else { return }
        breaker.recordSuccess()
        statistics.values.withLock { $0.unreachableSince = nil }
    }

    /// The gate closed: what waits in the queue or for a reconnect is given back now, and
    /// so is what libcurl holds but has not sent yet (waiting for a stream or a
    /// connection: its pre-request callback never ran).
    private func refuseQueued() {
        while let job = waiting.pop() { refuse(job) }
        for job in parked { refuse(job) }
        parked.removeAll()
        for transfer in active.transfers where transfer.job.sends == 0 {
            active.remove(transfer)
            curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
            refuse(transfer.job)
            release(transfer)
        }
    }

    /// An owner or a key was withdrawn (`Withdrawal.epoch` moved): its requests that have
    /// not been written end now, wherever they wait: the queue, the reconnect backoff, or
    /// libcurl (for a stream or a connection: its pre-request callback never ran). Those
    /// libcurl would write again are stopped by that callback.
    private func takeBackWithdrawn() {
        seenWithdrawals = Withdrawal.epoch
        var kept: [TransportJob] = []
        while let job = waiting.pop() {
            if job.request.isWithdrawn { job.finish(.failure(job.request.withdrawnFailure)) } else { kept.append(job) }
        }
        for job in kept { waiting.push(job) }
        parked.removeAll { job in
            guard job.request.isWithdrawn else { return false }
            job.finish(.failure(job.request.withdrawnFailure))
            return true
        }
        for transfer in active.transfers where transfer.job.sends == 0 && transfer.job.request.isWithdrawn {
            active.remove(transfer)
            curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
            transfer.job.finish(.failure(transfer.job.request.withdrawnFailure))
            release(transfer)
        }
    }

    /// A request that may not start because the process is stopping: `notStarted` when
    /// nothing of it was ever sent (the caller gives the device back), else it ends as
    /// unanswered (sent before, no answer, not sent again).
    private func refuse(_ job: TransportJob) {
        if job.sends == 0 {
            job.finish(.failure(StartGate.refusal))
        } else {
            job.finish(.failure(TransportFailure(.unanswered, "sent \(job.sends) times and never answered; not sent again: "
                + "the process is stopping")))
        }
    }

    private func cancelEverything() {
        let cancelled = TransportOutcome.failure(TransportFailure(.cancelled, "transport shut down before an answer"))
        for transfer in active.transfers {
            curl_multi_remove_handle(multi.pointer, transfer.easy.handle.pointer)
            transfer.job.finish(cancelled)
        }
        active.removeAll()
        if let probe { curl_multi_remove_handle(multi.pointer, probe.handle.pointer) }
        probe = nil
        while let job = waiting.pop() { job.finish(cancelled) }
        for job in parked { job.finish(cancelled) }
        parked.removeAll()
        idleHandles.removeAll()
    }

    private func curlMessage(_ code: CURLcode, _ detail: String) -> String {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        return "libcurl error \(code.rawValue): " + text
    }

    /// The code in libcurl's "HTTP/2 stream 5 was not closed cleanly: INTERNAL_ERROR (err 2)"
    /// (the same text in 7.88 and 8.x).
    static func http2ErrorCode(in text: String) -> UInt32? {
        guard let range = text.ranges(of: "(err ").last else { return nil }  // libcurl appends it last
        return UInt32(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// RFC 9113 §7 names.
    static func http2ErrorName(_ code: UInt32) -> String {
        let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
                     "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
                     "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
        return code < names.count ? names[Int(code)] : "unknown error"
    }
}

/// An easy handle kept from request to request, with its options and error buffer, and
/// the memory libcurl reads each request from: the body, the URL and the header list,
/// each rewritten in place per request (no `curl_slist_append`, no string put together,
/// no allocation once the buffers are big enough). libcurl only reads the header list (a
/// chain of `struct curl_slist` that need not come from `curl_slist_append`) and the body
/// while the transfer runs, and copies the URL; a request is written only when the
/// handle is not in a transfer.
final class PooledEasy {
    let handle: CurlEasyHandle
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var body = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var url = CStringBuffer()
    private var headerText = CStringBuffer()
    private var headerNodes = UnsafeMutableBufferPointer<curl_slist>(start: nil, count: 0)
    /// libcurl would add form-encoding and Accept headers APNs has no use for.
    private static let suppressedHeaders: [StaticString] = ["content-type:", "accept:", "expect:"]

    init?(settings: TransportSettings, statistics: TransportStatistics) {
        guard let handle = CurlEasyHandle() else { return nil }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer[0] = 0
        CurlTransfer.configure(handle, settings: settings, statistics: statistics)
        _ = pg_curl_easy_setopt_pointer(handle.pointer, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        errorBuffer.deallocate()
        body.deallocate()
        headerNodes.deallocate()
    }

    /// What the header list holds now: the requests of a campaign mostly share their
    /// headers and token, and then the list is kept as it is.
    private var listedAuthorization: String?
    private var listedHeaders: [HeaderField]?
    /// The array `body` was last copied from, kept so that its storage is not reused (an
    /// array's storage is never written while another array shares it).
    private var listedBody: [UInt8]?

    private static func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.baseAddress == b.baseAddress && a.count == b.count } }
    }

    /// The request's header lines, `authorization` first, then `headers`, then the
    /// suppressed defaults: written into this handle's text buffer and chained as nodes.
    func setHeaders(authorization: String?, _ headers: [HeaderField]) {
        if listedHeaders == headers, listedAuthorization == authorization { return }
        listedAuthorization = authorization
        listedHeaders = headers
        let lines = (authorization == nil ? 0 : 1) + headers.count + Self.suppressedHeaders.count
        if headerNodes.count < lines {
            headerNodes.deallocate()
            headerNodes = .allocate(capacity: max(lines, 8))
        }
        var bytes = authorization.map { 15 + $0.utf8.count + 1 } ?? 0  // "authorization: "
        for header in headers { bytes += header.name.utf8.count + 2 + header.value.utf8.count + 1 }
        for line in Self.suppressedHeaders { bytes += line.utf8CodeUnitCount + 1 }
        headerText.reserve(bytes)
        let nodes = headerNodes.baseAddress!
        var at = headerText.start
        var index = 0
        func startLine() {
            nodes[index] = curl_slist(data: at, next: index + 1 < lines ? nodes + index + 1 : nil)
            index += 1
        }
        if let authorization {
            startLine()
            CString.copy("authorization: ", to: &at)
            CString.copy(authorization, to: &at)
            CString.terminate(&at)
        }
        for header in headers {
            startLine()
            CString.copy(header.name, to: &at)
            CString.copy(": ", to: &at)
            CString.copy(header.value, to: &at)
            CString.terminate(&at)
        }
        for line in Self.suppressedHeaders {
            startLine()
            CString.copy(line, to: &at)
            CString.terminate(&at)
        }
        _ = pg_curl_easy_setopt_pointer(handle.pointer, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(nodes))
    }

    /// `base` + `path`, NUL-terminated in this handle's buffer (libcurl copies it).
    func setURL(_ base: String, _ path: String) {
        url.reserve(base.utf8.count + path.utf8.count + 1)
        var at = url.start
        CString.copy(base, to: &at)
        CString.copy(path, to: &at)
        CString.terminate(&at)
        _ = pg_curl_easy_setopt_string(handle.pointer, CURLOPT_URL, url.start)
    }

    /// A copy of the body for libcurl to read (again, if it re-sends), in a buffer kept
    /// from request to request.
    func setBody(_ bytes: [UInt8]) {
        // A campaign's requests often share one body: the same storage as last time is
        // already in place.
        if let listedBody, Self.sameStorage(listedBody, bytes) { return }
        listedBody = bytes
        if body.count < max(bytes.count, 1) {
            body.deallocate()
            body = .allocate(byteCount: max(bytes.count, 256), alignment: 1)
        }
        bytes.withUnsafeBytes { source in body.copyMemory(from: source) }
        _ = pg_curl_easy_setopt_off_t(handle.pointer, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
        _ = pg_curl_easy_setopt_pointer(handle.pointer, CURLOPT_POSTFIELDS, body.baseAddress)
    }

    /// `CURLOPT_CONNECTTIMEOUT_MS` as set now; 0 is libcurl's default (300 s).
    private var connectTimeout = 0

    func setConnectTimeout(_ milliseconds: Int) {
        guard milliseconds != connectTimeout else { return }
        connectTimeout = milliseconds
        _ = pg_curl_easy_setopt_long(handle.pointer, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
    }

    /// libcurl's message for the last failure on this handle ("" when none).
    var errorText: String { String(cString: errorBuffer) }

    func clearError() { errorBuffer[0] = 0 }
}

/// Memory for C strings libcurl reads, grown when a request needs more; its contents are
/// not kept when it grows (each request writes it anew).
struct CStringBuffer: ~Copyable {
    private(set) var start: UnsafeMutablePointer<CChar> = .allocate(capacity: 512)
    private var capacity = 512

    deinit { start.deallocate() }

    /// Room for `bytes` from `start`.
    mutating func reserve(_ bytes: Int) {
        guard bytes > capacity else { return }
        start.deallocate()
        capacity = max(bytes, capacity * 2)
        start = .allocate(capacity: capacity)
    }
}

/// Writing C strings through a cursor, into memory reserved beforehand.
enum CString {
    static func copy(_ text: StaticString, to at: inout UnsafeMutablePointer<CChar>) {
        let count = text.utf8CodeUnitCount
        UnsafeMutableRawPointer(at).copyMemory(from: text.utf8Start, byteCount: count)
        at += count
    }

    static func copy(_ text: String, to at: inout UnsafeMutablePointer<CChar>) {
        let start = at
        let copied: Int? = text.utf8.withContiguousStorageIfAvailable { bytes in
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: bytes.count) }
            return bytes.count
        }
        if let copied {
            at += copied
        } else {
            for byte in text.utf8 {
                at.pointee = CChar(bitPattern: byte)
                at += 1
            }
        }
    }

    static func terminate(_ at: inout UnsafeMutablePointer<CChar>) {
        at.pointee = 0
        at += 1
    }
}

/// A FIFO of jobs: a ring buffer, so that neither end costs a move of the others.
struct JobQueue {
    private var items: [TransportJob?] = Array(repeating: nil, count: 64)
    private var head = 0
    private var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func push(_ job: TransportJob) {
        if count == items.count {
            // Full: unrolled into a buffer twice the size, oldest first.
            var grown: [TransportJob?] = []
            grown.reserveCapacity(items.count * 2)
            for i in 0..<count { grown.append(items[(head + i) & (items.count - 1)]) }
            grown.append(contentsOf: repeatElement(nil, count: items.count))
            items = grown
            head = 0
        }
        items[(head + count) & (items.count - 1)] = job
        count += 1
    }

    mutating func pop() -> TransportJob? {
        guard count > 0 else { return nil }
        let job = items[head].take()
        head = (head + 1) & (items.count - 1)
        count -= 1
        return job
    }
}

/// The transfers libcurl holds: an array in which each transfer knows its slot, so adding,
/// finding (from the easy handle, `CurlTransfer.of`) and removing one hashes nothing.
struct ActiveTransfers {
    private(set) var transfers: [CurlTransfer] = []

    var count: Int { transfers.count }
    var isEmpty: Bool { transfers.isEmpty }

    private func contains(_ transfer: CurlTransfer) -> Bool {
        transfer.activeSlot < transfers.count && transfers[transfer.activeSlot] === transfer
    }

    mutating func insert(_ transfer: CurlTransfer) {
        transfer.activeSlot = transfers.count
        transfers.append(transfer)
    }

    /// Swaps the last transfer into its slot; false when it was not here.
    @discardableResult
    mutating func remove(_ transfer: CurlTransfer) -> Bool {
        guard contains(transfer) else { return false }
        let slot = transfer.activeSlot
        transfers.swapAt(slot, transfers.count - 1)
        transfers[slot].activeSlot = slot
        transfers.removeLast()
        transfer.activeSlot = .max
        return true
    }

    mutating func removeAll() {
        for transfer in transfers { transfer.activeSlot = .max }
        transfers.removeAll()
    }
}

/// When an answer last arrived on each connection, by its local port: a few connections,
/// so a short list beats a dictionary on every answer.
struct AnswerTimes {
    private var entries: [(port: Int32, time: UInt64)] = []

    mutating func record(_ port: Int32, at time: UInt64) {
        if let i = entries.firstIndex(where: { $0.port == port }) {
            entries[i].time = time
        } else {
            entries.append((port, time))
        }
    }

    /// 0 when none arrived on it.
    func time(of port: Int32) -> UInt64 { entries.first(where: { $0.port == port })?.time ?? 0 }

    mutating func forget(_ port: Int32) { entries.removeAll { $0.port == port } }
}
