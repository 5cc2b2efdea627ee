#if canImport(Glibc)
import Glibc
#endif
import CMicroHTTPD
import CShims
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: its own thread pool polling with epoll, bodies
/// read in chunks up to a limit, connection and per-IP limits, idle timeouts, and a
/// graceful stop. The daemon handle is owned here and stopped in `deinit` at the latest.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is set once in init and only handed to MHD, which is
    // thread-safe; `stopped` guards the one call that ends it.
    private let daemon: OpaquePointer
    private let context: ServerContext
    private let contextPointer: UnsafeMutableRawPointer
    private let stopped = Mutex(false)

    /// The port really bound (useful when the configuration asked for 0).
    public let port: Int
    public let configuration: HTTPServerConfiguration

    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder) throws(HTTPServerError) {
        self.configuration = configuration
        let context = ServerContext(responder: responder, maxBodyBytes: configuration.maxBodyBytes)
        self.context = context
        let contextPointer = Unmanaged.passRetained(context).toOpaque()
        self.contextPointer = contextPointer

        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw HTTPServerError(code: .invalidAddress,
                                  message: "listen address \(configuration.host) is not an IPv4 or IPv6 literal")
        }
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue)
        if address.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        let started: OpaquePointer? = address.withSockaddr { sockaddr in
            pg_mhd_start_daemon(
                flags, sockaddr,
                accessHandler, contextPointer,
                requestCompleted, contextPointer,
                UInt32(clamping: configuration.connectionLimit),
                UInt32(clamping: configuration.perIPConnectionLimit),
                UInt32(clamping: configuration.connectionTimeoutSeconds),
                UInt32(clamping: max(1, configuration.threads)),
                64 * 1024)
        }
        guard let started else {
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw HTTPServerError(code: .startFailed,
                                  message: "cannot listen on \(configuration.host):\(configuration.port): \(String(cString: strerror(errno)))")
        }
        daemon = started
        port = Int(pg_mhd_bound_port(started))
    }

    deinit {
        stopDaemon(listenSocket: -1)
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
        context.shuttingDown.store(true, ordering: .relaxed)
        let listenSocket = stopped.withLock { isStopped in isStopped ? -1 : MHD_quiesce_daemon(daemon) }
        let deadline = monotonicSeconds() + deadlineSeconds
        var drained = context.inFlight.load(ordering: .relaxed) == 0
        while !drained && monotonicSeconds() < deadline {
            usleep(5_000)
            drained = context.inFlight.load(ordering: .relaxed) == 0
        }
        stopDaemon(listenSocket: listenSocket)
        return drained
    }

    private func stopDaemon(listenSocket: Int32) {
        stopped.withLock { isStopped in
            guard !isStopped else { return }
            isStopped = true
            MHD_stop_daemon(daemon)
            // MHD hands the quiesced socket to us, to close after the daemon stops.
            if listenSocket >= 0 { close(listenSocket) }
        }
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Shared by every worker thread: the responder and the counters.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let maxBodyBytes: Int
    let inFlight = Atomic<Int>(0)
    let shuttingDown = Atomic<Bool>(false)

    init(responder: any HTTPResponder, maxBodyBytes: Int) {
        self.responder = responder
        self.maxBodyBytes = maxBodyBytes
    }
}

/// One request while its body arrives. Only the connection's thread touches it.
final class RequestState {
    var request: HTTPRequest
    var answered = false
    var overLimit = false
    var discardedBytes = 0

    init(request: HTTPRequest) {
        self.request = request
    }
}

// MARK: - C callbacks (no captures: state travels through the `cls` pointers)

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let requestContext, let uploadDataSize else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let existing = requestContext.pointee else {
        // First call: only the head has arrived.
        let request = readHead(connection: connection, url: url, method: method)
        let state = RequestState(request: request)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        context.inFlight.add(1, ordering: .relaxed)
        if context.shuttingDown.load(ordering: .relaxed) {
            state.answered = true
            return queue(context.responder.shuttingDown(request), on: connection)
        }
        if let declared = request.header("content-length").flatMap(Int.init), declared > context.maxBodyBytes {
            state.answered = true
            return queue(context.responder.bodyTooLarge(request, limit: context.maxBodyBytes), on: connection)
        }
        return .YES
    }

    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
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
        if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: chunkSize) { bytes in
                state.request.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: chunkSize))
            }
        }
        return .YES
    }
    if state.answered { return .YES }
    state.answered = true
    if state.overLimit {
        return queue(context.responder.bodyTooLarge(state.request, limit: context.maxBodyBytes), on: connection)
    }
    return queue(context.responder.respond(to: state.request), on: connection)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
    guard let cls, let requestContext, let pointer = requestContext.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    requestContext.pointee = nil
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().inFlight.subtract(1, ordering: .relaxed)
}

private func readHead(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?) -> HTTPRequest {
    var collected = CollectedValues()
    withUnsafeMutablePointer(to: &collected) { pointer in
        _ = MHD_get_connection_values(connection, .HEADER_KIND, collectValue, pointer)
        pointer.pointee.headersDone = true
        _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectValue, pointer)
    }
    var address = [CChar](repeating: 0, count: 64)
    pg_mhd_client_address(connection, &address, address.count)
    let addressBytes = address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: collected.query,
        headers: collected.headers,
        body: [],
        remoteAddress: String(decoding: addressBytes, as: UTF8.self))
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
        collected.pointee.headers.append((name.lowercased(), text))
    }
    return .YES
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let handle: OpaquePointer? = response.body.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress),
                                        .RESPMEM_MUST_COPY)
    }
    guard let handle else { return .NO }
    defer { MHD_destroy_response(handle) }
    for header in response.headers {
        _ = MHD_add_response_header(handle, header.name, header.value)
    }
    return MHD_queue_response(connection, UInt32(clamping: response.status), handle)
}

/// A bindable IPv4 or IPv6 address.
private struct SocketAddress {
    var storage = sockaddr_storage()
    var isIPv6 = false

    init?(host: String, port: Int) {
        guard port >= 0 && port <= 65535 else { return nil }
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { dst in
                withUnsafeBytes(of: v4) { dst.copyMemory(from: $0) }
            }
            return
        }
        var v6 = sockaddr_in6()
        let bare = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { dst in
                withUnsafeBytes(of: v6) { dst.copyMemory(from: $0) }
            }
            isIPv6 = true
            return
        }
        return nil
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }
}
