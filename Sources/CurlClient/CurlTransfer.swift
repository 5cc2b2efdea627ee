internal import CCurl
internal import CCurlShims
import Timing
#if canImport(Glibc)
import Glibc
#endif

/// When the transport thread next sweeps its transfers for deadlines (`CurlLoop`): moved
/// forward by the pre-request callback when a write arms a deadline before it. Only the
/// transport thread touches it.
final class DeadlineSweep {
    var next: UInt64 = .max
}

/// One easy handle and the request on it: collects the response through libcurl's
/// callbacks. Kept from request to request with its handle (`PooledEasy` holds the
/// body, header list and URL libcurl reads), so a request allocates nothing here.
final class CurlTransfer {
    /// The request on the handle now; set by `begin`, before the handle goes to libcurl.
    private(set) var job: TransportJob!
    let easy: PooledEasy
    private let maxSends: Int
    var apnsId: HeaderText?
    var uniqueId: String?
    var retryAfter: String?
    var responseBody: [UInt8] = []
    /// A response header arrived: from then on the answer wins over the deadline.
    var answerStarted = false
    enum Abort { case sendLimit, stopping, withdrawn }
    /// Why the pre-request callback stopped a send, if it did.
    var abort: Abort?
    /// Monotonic milliseconds when it was handed to libcurl.
    var startedAt: UInt64 = 0
    /// The local port of the connection it was last sent on (from the pre-request
    /// callback): which connection it waits on, since libcurl 7.88 tells a transfer's
    /// socket only once it is done.
    var localPort: Int32 = 0
    /// Monotonic milliseconds of its last send.
    var sentAt: UInt64 = 0
    /// Its place in `ActiveTransfers` while libcurl holds it, else `.max`.
    var activeSlot = Int.max
    /// Sends within this transfer: more than one means libcurl re-sent it by itself on a
    /// fresh connection (a refused stream, or a GOAWAY that did not cover it).
    private var sendsHere = 0
    /// Re-sends libcurl made by itself within this transfer (each after a refusal).
    var resends: Int { max(0, sendsHere - 1) }
    /// Told of each re-send libcurl makes by itself: whether it is the request's first.
    private let onResend: (_ first: Bool) -> Void
    /// The loop's next deadline sweep: a write arms its request's deadline, and moves the
    /// sweep forward if it comes first.
    private let deadlines: DeadlineSweep
    private let timeoutMilliseconds: UInt64
    /// APNs error bodies are small JSON; anything bigger is cut off here.
    static let maximumResponseBody = 16 * 1024

    private let clock: any TimeSource
    /// Closed when the process stops: no send from then on.
    private let gate: StartGate

    init?(settings: TransportSettings, statistics: TransportStatistics, gate: StartGate, clock: any TimeSource,
          deadlines: DeadlineSweep, onResend: @escaping (_ first: Bool) -> Void) {
        guard let easy = PooledEasy(settings: settings, statistics: statistics) else { return nil }
        self.easy = easy
        self.gate = gate
        self.clock = clock
        self.onResend = onResend
        self.deadlines = deadlines
        timeoutMilliseconds = UInt64(settings.timeoutMilliseconds)
        maxSends = settings.maxResends + 1
        let e = easy.handle.pointer
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_WRITEDATA, me)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HEADERDATA, me)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_PREREQDATA, me)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_PRIVATE, me)
    }

    /// The transfer an easy handle of ours belongs to (its `CURLOPT_PRIVATE`); the handle
    /// keeps it alive (the loop's pool or active set holds it).
    static func of(_ easy: UnsafeMutableRawPointer) -> CurlTransfer? {
        var pointer: UnsafeMutableRawPointer?
        guard pg_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { return nil }
        return Unmanaged<CurlTransfer>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Puts `job` on the handle, with what the last request left cleared.
    func begin(_ job: TransportJob, baseURL: String, now: UInt64) {
        self.job = job
        apnsId = nil
        uniqueId = nil
        retryAfter = nil
        if !responseBody.isEmpty { responseBody = [] }
        answerStarted = false
        abort = nil
        startedAt = now
        localPort = 0
        sentAt = 0
        sendsHere = 0
        let request = job.request
        easy.setBody(request.body)
        easy.setHeaders(authorization: request.authorization, request.headers)
        easy.setURL(baseURL, request.path)
        easy.clearError()
    }

    /// The handle is back in the pool: it no longer keeps the job (and its caller's request).
    func end() { job = nil }

    /// The answer, its headers and body moved out (not copied) of this transfer.
    func takeResponse(status: Int) -> TransportResponse {
        // Swapped into an empty response: built from `take()`n values instead, the response
        // was copied and the original destroyed (4 retains and releases a request).
        var response = TransportResponse(status: status)
        swap(&response.apnsIdText, &apnsId)
        swap(&response.uniqueId, &uniqueId)
        swap(&response.retryAfter, &retryAfter)
        swap(&response.body, &responseBody)
        return response
    }

    /// The status line's code, 0 when no response header arrived.
    var responseCode: Int {
        var code = 0
        _ = pg_curl_easy_getinfo_long(easy.handle.pointer, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Whether the server got every byte of the body (a reset before that means the
    /// request cannot have been processed).
    var uploadedWholeBody: Bool {
        var uploaded: curl_off_t = 0
        _ = pg_curl_easy_getinfo_off_t(easy.handle.pointer, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        return job.sends > 0 && Int(uploaded) >= job.request.body.count
    }

    /// Called by libcurl right before each write of the request, its own re-sends
    /// included: no write once the process is stopping or the request's owner or key was
    /// withdrawn, none beyond the bound. A write arms the request's deadline: time spent
    /// waiting for a stream, a connection or in the queue is not taken from it.
    func maySend(localPort: Int32) -> Bool {
        self.localPort = localPort
        if gate.isClosed {
            abort = .stopping
            return false
        }
        if job.request.isWithdrawn {
            abort = .withdrawn
            return false
        }
        guard job.sends < maxSends else {
            abort = .sendLimit
            return false
        }
        if sendsHere > 0 { onResend(sendsHere == 1 && job.sends == 1) }
        sentAt = clock.monotonicMilliseconds()
        let deadline = sentAt + timeoutMilliseconds
        job.deadline = deadline
        if deadline < deadlines.next { deadlines.next = deadline }
        job.sends += 1
        sendsHere += 1
        answerStarted = false
        return true
    }

    /// Options that stay the same for every request on an easy handle.
    static func configure(_ easy: CurlEasyHandle, settings: TransportSettings, statistics: TransportStatistics) {
        let e = easy.pointer
        let version = settings.baseURL.hasPrefix("https://") ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        _ = pg_curl_easy_setopt_long(e, CURLOPT_HTTP_VERSION, Int(version))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_PIPEWAIT, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_POST, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_NOSIGNAL, 1)
        // No proxy from http_proxy & co.: APNs is reached directly (and libcurl then skips
        // its per-request environment lookups).
        _ = pg_curl_easy_setopt_string(e, CURLOPT_PROXY, "")
        // Quiet connections: TCP keepalive on every libcurl, HTTP/2 PING where
        // curl_easy_upkeep reaches a multi handle's connections (libcurl >= 8.x; see
        // CurlLoop), and none reused after `maxIdleSeconds` without traffic.
        _ = pg_curl_easy_setopt_long(e, CURLOPT_MAXAGE_CONN, max(1, settings.maxIdleSeconds))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TCP_KEEPALIVE, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TCP_KEEPIDLE, 30)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TCP_KEEPINTVL, 10)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_UPKEEP_INTERVAL_MS, settings.upkeepIntervalMilliseconds)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYPEER, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYHOST, 2)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        if let caFile = settings.caFile { _ = pg_curl_easy_setopt_string(e, CURLOPT_CAINFO, caFile) }
        _ = pg_curl_easy_setopt_write_function(e, curlWriteBody)
        _ = pg_curl_easy_setopt_header_function(e, curlReadHeader)
        _ = pg_curl_easy_setopt_prereq_function(e, curlPrerequest)
        _ = pg_curl_easy_setopt_sockopt_function(e, curlNewSocket)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_SOCKOPTDATA, Unmanaged.passUnretained(statistics).toOpaque())
        _ = pg_curl_easy_setopt_closesocket_function(e, curlCloseSocket)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(statistics).toOpaque())
    }
}

// The callbacks reach their transfer through `_withUnsafeGuaranteedRef`: the transfer
// outlives every callback on its handle, so no retain and release per call (~6 pairs a
// request).
private let curlPrerequest: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = { context, _, _, _, localPort in
    guard let context else { return 0 }
    let send = Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.maySend(localPort: localPort) }
    return send ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
}

/// One call per socket libcurl opens, i.e. per connection attempt.
private let curlNewSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, curlsocktype) -> Int32 = { context, socket, _ in
    if let context {
        let statistics = Unmanaged<TransportStatistics>.fromOpaque(context).takeUnretainedValue()
        statistics.values.withLock {
            $0.connectionsOpened += 1
            $0.sockets.insert(socket)
        }
        statistics.openSockets.add(1, ordering: .relaxed)
    }
    return Int32(CURL_SOCKOPT_OK)
}

/// libcurl closes a connection's socket: counted, then closed as libcurl would.
private let curlCloseSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { context, socket in
    if let context {
        let statistics = Unmanaged<TransportStatistics>.fromOpaque(context).takeUnretainedValue()
        statistics.values.withLock {
            $0.connectionsClosed += 1
            $0.sockets.remove(socket)
        }
        statistics.openSockets.subtract(1, ordering: .relaxed)
    }
    return close(socket)
}

private let curlWriteBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.receiveBody(bytes) }
    return length
}

private let curlReadHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let line = UnsafeRawBufferPointer(start: data, count: length)
    Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.receiveHeader(line) }
    return length
}

extension CurlTransfer {
    /// Keeps the start of an error body (`maximumResponseBody`).
    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) {
        let room = Self.maximumResponseBody - responseBody.count
        if room > 0 { responseBody.append(contentsOf: bytes.prefix(room)) }
    }

    /// One header line (the status line and the blank line included): the answer has started.
    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        answerStarted = true
        // Only apns-id, apns-unique-id and retry-after are kept: the status line, the blank
        // line and other headers end at their first byte.
        guard bytes.count > 8 else { return }
        let first = bytes[0] | 0x20
        guard first == UInt8(ascii: "a") || first == UInt8(ascii: "r") else { return }
        let kept: KeptHeader
        if Self.header(bytes, startsWith: KeptHeader.apnsId.name) {
            kept = .apnsId
        } else if Self.header(bytes, startsWith: KeptHeader.uniqueId.name) {
            kept = .uniqueId
        } else if Self.header(bytes, startsWith: KeptHeader.retryAfter.name) {
            kept = .retryAfter
        } else {
            return
        }
        var start = kept.name.utf8CodeUnitCount, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A {
            end -= 1
        }
        let value = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        switch kept {
        case .apnsId: apnsId = HeaderText(value)
        case .uniqueId: uniqueId = String(decoding: value, as: UTF8.self)
        case .retryAfter: retryAfter = String(decoding: value, as: UTF8.self)
        }
    }

    /// The answer's header lines a transfer keeps.
    private enum KeptHeader {
        case apnsId, uniqueId, retryAfter

        /// Lower case, with its colon.
        var name: StaticString {
            switch self {
            case .apnsId: "apns-id:"
            case .uniqueId: "apns-unique-id:"
            case .retryAfter: "retry-after:"
            }
        }
    }

    /// Whether the line starts with `name` (lower case, with its colon), in any case.
    private static func header(_ line: UnsafeRawBufferPointer, startsWith name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard line.count > count else { return false }
        let expected = name.utf8Start
        for i in 0..<count {
            let b = line[i]
            if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != expected[i] { return false }
        }
        return true
    }
}

