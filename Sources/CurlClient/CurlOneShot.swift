import APNsCore
import OSThreads

/// One HTTP/2 request and its answer, for the few requests that are not pushes (channel
/// management): any method, the answer's headers APNs uses, and its body.
public struct OneShotRequest: Sendable, Equatable {
    public var method: String
    /// The whole URL: base URL and path.
    public var url: String
    public var headerLines: [String]
    public var body: [UInt8]

    public init(method: String, url: String, headerLines: [String], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headerLines = headerLines
        self.body = body
    }
}

public struct OneShotResponse: Sendable, Equatable {
    public var status: Int
    /// The answer's headers by lower-case name (the last value of a repeated one).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends one request and waits for its answer; the libcurl one below, or a test's.
public protocol OneShotTransport: Sendable {
    func perform(_ request: OneShotRequest) async -> Result<OneShotResponse, TransportFailure>
}

/// A `BlockingRequest` per request, on a thread of its own: channel management is a
/// handful of requests, for which the multiplexed push transport would be overkill.
/// HTTP/2 over TLS 1.2+ (verified; `caFile` for a local server), or cleartext with prior
/// knowledge to a loopback `http://` URL, as the push transport does.
public struct CurlOneShot: OneShotTransport {
    public var caFile: String?
    public var timeoutMilliseconds: Int

    public init(caFile: String? = nil, timeoutMilliseconds: Int = 10_000) {
        self.caFile = caFile
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func perform(_ request: OneShotRequest) async -> Result<OneShotResponse, TransportFailure> {
        await withCheckedContinuation { continuation in
            let settings = self
            let started = DetachedThread.start(name: "pg-oneshot") { continuation.resume(returning: settings.performBlocking(request)) }
            if !started { continuation.resume(returning: .failure(TransportFailure(.transportError, "cannot start a thread for the request"))) }
        }
    }

    func performBlocking(_ request: OneShotRequest) -> Result<OneShotResponse, TransportFailure> {
        let exchange = BlockingRequest(httpVersion: .http2, timeoutMilliseconds: timeoutMilliseconds,
                                       connectTimeoutMilliseconds: min(timeoutMilliseconds, 5_000), caFile: caFile,
                                       usesProxyEnvironment: false, keepsAnswer: true)
        var sent = request
        sent.headerLines += ["content-type:" + (request.body.isEmpty ? "" : " application/json"), "accept:", "expect:"]
        return exchange.perform(sent).mapError { TransportFailure($0.code, "\(request.method) \(request.url): " + $0.message) }
    }
}

