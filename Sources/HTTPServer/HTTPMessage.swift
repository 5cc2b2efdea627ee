/// A request as the server hands it to a responder: head, decoded query items and the
/// whole body (already bounded by the configured limit).
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path as sent, without the query (`/v1/links/check`).
    public var path: String
    /// Query items as decoded by the server, in order.
    public var query: [(name: String, value: String)]
    /// Header names lowercased, in the order received.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var remoteAddress: String
    /// The port the server listens on (0: not known, e.g. a request made in-process).
    public var localPort: Int = 0

    public init(method: String, path: String, query: [(name: String, value: String)] = [],
                headers: [(name: String, value: String)] = [], body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of a header (name compared case-insensitively).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// For an RFC 9457 problem answer: its top-level `code` and the codes of its
    /// `errors[]`, so the responder can count them without reading the body back.
    public var problemCodes: (code: String, errors: [String])?
    /// Set on an answer that is not ready yet: the server runs `handOff.work` on its
    /// upstream pool (waiting for another host) and sends what it returns; status,
    /// headers and body of this value are not sent.
    public var handOff: HTTPHandOff?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An answer made by `work` on the server's upstream pool; `busy` answers instead when
    /// that pool and its queue are full.
    public static func handOff(_ work: @escaping @Sendable () -> HTTPResponse,
                               busy: @escaping @Sendable () -> HTTPResponse) -> HTTPResponse {
        var response = HTTPResponse(status: 503)
        response.handOff = HTTPHandOff(work: work, busy: busy)
        return response
    }

    /// The answer with every hand-off run here, on the calling thread (in-process callers
    /// and an upstream worker whose work handed off again).
    public func settled() -> HTTPResponse {
        var response = self
        while let handOff = response.handOff { response = handOff.work() }
        return response
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

/// Work a responder hands to the server's upstream pool: requests that wait on another
/// host (Apple's channel management API) run there, so they hold neither an I/O thread
/// nor a worker that ordinary long requests need.
public struct HTTPHandOff: Sendable {
    public let work: @Sendable () -> HTTPResponse
    public let busy: @Sendable () -> HTTPResponse

    public init(work: @escaping @Sendable () -> HTTPResponse, busy: @escaping @Sendable () -> HTTPResponse) {
        self.work = work
        self.busy = busy
    }
}

/// What answers requests. The server calls it on its I/O and worker threads, concurrently;
/// an answer may hand the rest of its work to the upstream pool (`HTTPResponse.handOff`).
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// The answer when a body goes over the limit (the body is not read further).
    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
    /// The answer to requests that arrive on open connections while shutting down.
    func shuttingDown(_ request: HTTPRequest) -> HTTPResponse
    /// The answer to a request whose head breaks the framing rules; the server adds
    /// `Connection: close` and closes the connection after it. Also the place to log it.
    func refused(_ violation: FramingViolation, remoteAddress: String) -> HTTPResponse
    /// A request no responder saw: libmicrohttpd answered it by itself (`status`), or it
    /// was closed without an answer (0): its head was never finished (the client closed,
    /// or the idle timeout) or libmicrohttpd could not read its request line. Also the
    /// place to log it.
    func answeredByLibrary(status: Int, remoteAddress: String)
    /// True for requests that can take long (big bodies to plan or check): they run on
    /// the server's worker pool, their connection suspended, so probes never wait.
    func runsLong(_ request: HTTPRequest) -> Bool
    /// The answer when the worker pool and its queue are full (503, `Retry-After`).
    func overloaded(_ request: HTTPRequest) -> HTTPResponse
}

extension HTTPResponder {
    public func answeredByLibrary(status: Int, remoteAddress: String) {}

    public func runsLong(_ request: HTTPRequest) -> Bool { false }

    public func overloaded(_ request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: 503, headers: [("Retry-After", "1"), ("Content-Type", "text/plain; charset=utf-8")],
                     body: Array("overloaded\n".utf8))
    }

    /// A plain answer naming the violated rule, for responders that do not render
    /// their own (the gateway answers with problem+json).
    public func refused(_ violation: FramingViolation, remoteAddress: String) -> HTTPResponse {
        HTTPResponse(status: violation.status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                     body: Array("\(violation.code.rawValue): \(violation.detail)\n".utf8))
    }
}
