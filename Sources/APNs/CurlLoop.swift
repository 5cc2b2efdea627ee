import CCurl
import CShims
#if canImport(Glibc)
import Glibc
#endif

/// The transport thread's state: the multi handle, the transfers in flight, the queue.
/// Everything here is touched only by that one thread (hence `@unchecked Sendable`, which
/// is needed only to hand it to the thread once).
final class CurlLoop: @unchecked Sendable {
    private let multi: CurlMultiHandle
    private let settings: TransportSettings
    private let statistics: TransportStatistics
    private let maxInFlight: Int
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [CurlEasyHandle] = []
    private var waiting = JobQueue()
    /// Jobs sent back after a failed connection, released at `reconnectAt`.
    private var parked: [TransportJob] = []
    private var reconnectAt: UInt64 = 0
    private var consecutiveConnectionFailures = 0

    init(multi: CurlMultiHandle, settings: TransportSettings, statistics: TransportStatistics) {
        self.multi = multi
        self.settings = settings
        self.statistics = statistics
        maxInFlight = max(1, settings.connections * settings.maxConcurrentStreams)
        let m = multi.pointer
        _ = pg_curl_multi_setopt_long(m, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = pg_curl_multi_setopt_long(m, CURLMOPT_MAX_HOST_CONNECTIONS, settings.connections)
        _ = pg_curl_multi_setopt_long(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, settings.connections)
        _ = pg_curl_multi_setopt_long(m, CURLMOPT_MAX_CONCURRENT_STREAMS, settings.maxConcurrentStreams)
    }

    func run(takeInbox: () -> ([TransportJob], Bool)) {
        while true {
            let (incoming, stopping) = takeInbox()
            for job in incoming { waiting.push(job) }
            if stopping { break }
            let now = monotonicMilliseconds()
            if !parked.isEmpty, now >= reconnectAt {
                for job in parked { waiting.push(job) }
                parked.removeAll(keepingCapacity: true)
            }
            while active.count < maxInFlight, let job = waiting.pop() { start(job) }
            var running: Int32 = 0
            curl_multi_perform(multi.pointer, &running)
            collectFinished()
            if active.count < maxInFlight, !waiting.isEmpty { continue }
            var wait: Int32 = 1000
            if !parked.isEmpty { wait = Int32(clamping: max(0, Int(reconnectAt) - Int(now))) }
            if !active.isEmpty || wait > 0 {
                curl_multi_poll(multi.pointer, nil, 0, wait, nil)
            }
        }
        cancelEverything()
    }

    private func start(_ job: TransportJob) {
        let remaining = Int(job.deadline) - Int(monotonicMilliseconds())
        guard remaining > 0 else {
            job.finish(.failure(TransportFailure(.timeout, "no answer within \(settings.timeoutMilliseconds) ms (waited in the queue)")))
            return
        }
        let easy: CurlEasyHandle
        if let reused = idleHandles.popLast() {
            easy = reused
        } else if let fresh = CurlEasyHandle() {
            CurlTransfer.configure(fresh, settings: settings)
            easy = fresh
        } else {
            job.finish(.failure(TransportFailure(.transportError, "libcurl could not create an easy handle")))
            return
        }
        let transfer = CurlTransfer(job: job, easy: easy, baseURL: settings.baseURL, timeoutMilliseconds: remaining)
        guard curl_multi_add_handle(multi.pointer, easy.pointer) == CURLM_OK else {
            job.finish(.failure(TransportFailure(.transportError, "libcurl refused the request")))
            return
        }
        active[easy.pointer] = transfer
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.pointer, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: easy) else { continue }
            let result = message.pointee.data.result
            let status = transfer.responseCode
            curl_multi_remove_handle(multi.pointer, easy)
            idleHandles.append(transfer.easy)
            finish(transfer, result: result, status: status)
        }
    }

    private func finish(_ transfer: CurlTransfer, result: CURLcode, status: Int) {
        let job = transfer.job
        if status > 0 {
            // An answer arrived (even if the stream broke afterwards): never send it again.
            consecutiveConnectionFailures = 0
            job.finish(.response(TransportResponse(status: status, apnsId: transfer.apnsId,
                                                   retryAfter: transfer.retryAfter, body: transfer.responseBody)))
            return
        }
        let message = curlMessage(result)
        switch result {
        case CURLE_OPERATION_TIMEDOUT:
            job.finish(.failure(TransportFailure(.timeout, "no answer within \(settings.timeoutMilliseconds) ms")))
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            job.finish(.failure(TransportFailure(.tlsFailed, message)))
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_OUT_OF_MEMORY:
            job.finish(.failure(TransportFailure(.transportError, message)))
        default:
            // GOAWAY, reset, refused or dropped connection: nothing was answered, so the
            // request goes back to the queue after a reconnect backoff.
            let couldNotConnect = result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST
            guard job.requeues < settings.maxRequeues else {
                job.finish(.failure(TransportFailure(couldNotConnect ? .connectionFailed : .connectionLost,
                                                     "\(message) (after \(job.requeues) reconnects)")))
                return
            }
            job.requeues += 1
            noteConnectionFailure()
            // A fresh deadline for the new attempt, counted from the reconnect.
            job.deadline = max(reconnectAt, monotonicMilliseconds()) + UInt64(settings.timeoutMilliseconds)
            statistics.values.withLock { $0.requeued += 1 }
            parked.append(job)
        }
    }

    /// All requests that fail together (one GOAWAY) count as one connection failure.
    private func noteConnectionFailure() {
        let now = monotonicMilliseconds()
        guard now >= reconnectAt else { return }
        consecutiveConnectionFailures += 1
        statistics.values.withLock { $0.connectionFailures += 1 }
        let backoff = min(2_000, 25 << min(consecutiveConnectionFailures - 1, 10))
        reconnectAt = now + UInt64(backoff)
    }

    private func cancelEverything() {
        let cancelled = TransportOutcome.failure(TransportFailure(.cancelled, "transport shut down before an answer"))
        for (easy, transfer) in active {
            curl_multi_remove_handle(multi.pointer, easy)
            transfer.job.finish(cancelled)
        }
        active.removeAll()
        while let job = waiting.pop() { job.finish(cancelled) }
        for job in parked { job.finish(cancelled) }
        parked.removeAll()
        idleHandles.removeAll()
    }

    private func curlMessage(_ code: CURLcode) -> String {
        "libcurl error \(code.rawValue): " + String(cString: curl_easy_strerror(code))
    }
}

/// A FIFO of jobs without O(n) removal at the front.
struct JobQueue {
    private var items: [TransportJob] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func push(_ job: TransportJob) { items.append(job) }

    mutating func pop() -> TransportJob? {
        guard head < items.count else { return nil }
        let job = items[head]
        head += 1
        if head > 1024, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return job
    }
}

func monotonicMilliseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
}
