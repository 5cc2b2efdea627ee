#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import StrictJSON
import Timing

/// The HTTP face of the gateway: routing, authentication, rate limits, metrics and the
/// request log around the endpoint handlers. It is an `HTTPResponder`, so tests can call
/// it in-process and through a live server alike.
public final class GatewayService: HTTPResponder {
    public let router: APIRouter
    public let keyring: APIKeyring
    public let defaultRateLimit: RateLimit?
    public let rateLimiter: RateLimiter
    /// Failed authentication attempts, per client address.
    public let authFailures: RateLimiter
    /// How many failed attempts a client address may make (`server.failedAuthenticationLimit`).
    public let failedAuthenticationLimit: RateLimit
    public let metrics: Metrics
    public let log: RequestLog
    /// Whose forwarding headers name the client (`server.trustedProxies`).
    public let trustedProxies: TrustedProxies
    private let clock: any TimeSource
    /// The thread behind `/readyz` and the sampled gauges, when the API has one: a service
    /// the server's owner runs and stops with the others.
    public let readiness: ReadinessMonitor?

    public init(router: APIRouter, keyring: APIKeyring, defaultRateLimit: RateLimit? = nil,
                metrics: Metrics, log: RequestLog, clock: any TimeSource,
                trustedProxies: TrustedProxies = .none, failedAuthenticationLimit: RateLimit = GatewayService.authFailureLimit,
                readiness: ReadinessMonitor? = nil) {
        self.readiness = readiness
        self.router = router
        self.failedAuthenticationLimit = failedAuthenticationLimit
        self.trustedProxies = trustedProxies
        self.keyring = keyring
        self.defaultRateLimit = defaultRateLimit
        self.rateLimiter = RateLimiter(clock: clock)
        self.authFailures = RateLimiter(clock: clock, maxEntries: 10_000)
        self.metrics = metrics
        self.log = log
        self.clock = clock
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = clock.wallSeconds()
        metrics.requestStarted()
        let (requestID, clientRequestID) = requestIDs(request)
        var keyName: String?
        var operation = "unmatched"
        // Who asked: the peer, or the client a trusted proxy names. When its forwarding
        // headers cannot be read exactly, nothing is routed (the client is not known)
        // and the line is logged under the peer.
        let resolved = trustedProxies.client(peer: request.remoteAddress, headers: request.headers)
        let client = (try? resolved.get()) ?? ClientAddress(peer: request.remoteAddress)

        let match = router.match(method: request.method, path: request.path)
        var anyHost = false
        if case .found(let name, _, _, let parameters) = match { (operation, anyHost) = (name, parameters.anyHost) }
        var notes: RequestNotes?
        let response = Self.rendering { () throws(Problem) in
            if case .failure(let problem) = resolved { throw Problem.forwarding(problem) }
            // No keys: only this machine's programs are served, never a web page (DNS rebinding).
            if keyring.isEmpty, let refusal = LoopbackOnly.problem(request, anyHost: anyHost) { throw refusal }
            switch match {
            case .notFound:
                throw Problem.notFound(request.path)
            case .methodNotAllowed(let allowed):
                throw Problem.methodNotAllowed(request.method, allowed: allowed)
            case .found(_, let isPublic, let handler, let parameters):
                let key = try admit(request, client: client, isPublic: isPublic)
                keyName = key?.name
                var context = parameters
                // No keys configured: one operator, who sees everything.
                context.caller = key.map(Caller.init(key:)) ?? .open
                notes = context.notes
                // One rule for every endpoint's query string (QueryParameters).
                if let problem = QueryParameters.shapeProblem(request.query, taken: parameters.queryNames) { throw problem }
                return try handler(request, context)
            }
        }
        // The app the handler named, also when it threw.
        let app = notes?.app
        let asked = Asked(request: request, client: client, operation: operation, keyName: keyName, requestID: requestID,
                          clientRequestID: clientRequestID, started: started, app: app)
        // An answer handed to the upstream pool is counted and logged once it is made
        // (closures only then: the usual answer allocates none).
        if let handOff = response.handOff {
            return .handOff({ [self] in answer(handOff.work().settled(), to: asked) }, busy: { [self] in answer(handOff.busy(), to: asked) })
        }
        return answer(response, to: asked)
    }

    /// What the log line and the metrics of one request need, once its answer is made.
    private struct Asked: Sendable {
        let request: HTTPRequest
        let client: ClientAddress
        let operation: String
        let keyName: String?
        let requestID: String
        let clientRequestID: String?
        let started: Double
        let app: String?
    }

    private func answer(_ made: HTTPResponse, to asked: Asked) -> HTTPResponse {
        var response = made
        response.headers.append(("X-Request-Id", asked.requestID))
        finish(asked.request, client: asked.client, response: response, operation: asked.operation, keyName: asked.keyName,
               requestID: asked.requestID, clientRequestID: asked.clientRequestID, started: asked.started, app: asked.app)
        metrics.requestFinished()
        return response
    }

    /// A client's own `X-Request-Id` is kept when it is short and safe (1–64 of
    /// `[A-Za-z0-9._-]`); otherwise a new one is made and the client's is logged beside
    /// it (cut and escaped).
    func requestIDs(_ request: HTTPRequest) -> (id: String, client: String?) {
        guard let given = request.header("x-request-id") else { return (randomRequestID(), nil) }
        let safe = !given.isEmpty && given.utf8.count <= 64 && given.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
        return safe ? (given, nil) : (randomRequestID(), TextSafety.excerpt(given, limit: 64))
    }

    public func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        answerEarly(request, problem: .bodyTooLarge(limit: limit))
    }

    public func shuttingDown(_ request: HTTPRequest) -> HTTPResponse {
        answerEarly(request, problem: .shuttingDown)
    }

    /// Previews, campaign intake, Live Activity updates and ends and link batches run on
    /// the server's worker pool; a single link check is cheap and stays on the I/O threads.
    /// (Channel calls hand their wait for Apple to the upstream pool: `HTTPResponse.handOff`.)
    public func runsLong(_ request: HTTPRequest) -> Bool {
        // PUT /v1/campaigns/{id}/parts/{part} checks and stores up to maxBodyBytes of tokens.
        if request.method == "PUT" { return request.path.hasPrefix("/v1/campaigns/") }
        guard request.method == "POST" else { return false }
        var path = Substring(request.path)
        // /v1/apps/{app}/links/check is /v1/links/check for one app.
        if path.hasPrefix("/v1/apps/"), let slash = path.dropFirst(9).firstIndex(of: "/") { path = "/v1" + path[slash...] }
        switch path {
        case "/v1/notifications/preview", "/v1/campaigns": return true
        case "/v1/links/check": return request.body.count > 4096
        default:
            // POST /v1/campaigns/{id}/start makes a filled campaign sendable (one write, but
            // its lane is chosen by counting its devices).
            if path.hasPrefix("/v1/campaigns/") && path.hasSuffix("/start") { return true }
            // POST /v1/live-activities/{activity}/update|end plan a campaign to every token.
            return path.hasPrefix("/v1/live-activities/") && (path.hasSuffix("/update") || path.hasSuffix("/end"))
        }
    }

    public func overloaded(_ request: HTTPRequest) -> HTTPResponse {
        answerEarly(request, problem: .overloaded)
    }

    /// A head that breaks the framing rules: logged with method and path "-" (the head
    /// is not trusted enough to quote), answered as a problem, the connection closed.
    public func refused(_ violation: FramingViolation, remoteAddress: String) -> HTTPResponse {
        let request = HTTPRequest(method: "-", path: "-", remoteAddress: remoteAddress)
        return answerEarly(request, problem: .framing(violation))
    }

    /// A request closed without an answer (status 0: an unfinished head, a request line
    /// libmicrohttpd could not read) or answered by libmicrohttpd itself: one log line and
    /// the count, so no request goes unrecorded.
    public func answeredByLibrary(status: Int, remoteAddress: String) {
        let request = HTTPRequest(method: "-", path: "-", remoteAddress: remoteAddress)
        finish(request, client: ClientAddress(peer: remoteAddress), response: HTTPResponse(status: status),
               operation: "unmatched", keyName: nil,
               requestID: randomRequestID(), started: clock.wallSeconds())
    }

    private func answerEarly(_ request: HTTPRequest, problem: Problem) -> HTTPResponse {
        let started = clock.wallSeconds()
        let (requestID, clientRequestID) = requestIDs(request)
        var response = Self.rendering { () throws(Problem) in throw problem }
        response.headers.append(("X-Request-Id", requestID))
        let operation: String
        if case .found(let name, _, _, _) = router.match(method: request.method, path: request.path) {
            operation = name
        } else {
            operation = "unmatched"
        }
        // The log names the client when the headers say it; a problem with them is not
        // this answer's to report.
        let client = (try? trustedProxies.client(peer: request.remoteAddress, headers: request.headers).get())
            ?? ClientAddress(peer: request.remoteAddress)
        finish(request, client: client, response: response, operation: operation, keyName: nil, requestID: requestID,
               clientRequestID: clientRequestID, started: started)
        return response
    }

    /// Authentication, then the caller's rate limit. With no keys configured every
    /// caller is let in (the server refuses to listen beyond loopback in that case).
    /// A right key is always looked at and let in, whatever other callers from the same
    /// address did: only its own rate limit applies. Failed attempts (a wrong or
    /// malformed key) are limited per client address (`server.failedAuthenticationLimit`,
    /// by default a burst of 10, then one more every 6 seconds); over it, a wrong key is
    /// answered 429 instead of 401. What keeps
    /// guessing hopeless is the key's size (at least 128 random bits, which
    /// `pushgate hash-key` checks), not this limit.
    public static let authFailureLimit = RateLimit(perSecond: 1.0 / 6, burst: 10)

    private func admit(_ request: HTTPRequest, client: ClientAddress, isPublic: Bool) throws(Problem) -> APIKey? {
        if isPublic || keyring.isEmpty { return nil }
        let authorizations = request.headers.filter { $0.name == "authorization" }
        guard let authorization = authorizations.first?.value else {
            throw .unauthorized("missing Authorization: Bearer <key>")
        }
        if authorizations.count > 1 {
            throw .framing(FramingViolation(.duplicateAuthorization, "Authorization appears \(authorizations.count) times"))
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        let key = parts.count == 2 && parts[0].lowercased() == "bearer" ? keyring.authenticate(bearer: String(parts[1])) : nil
        guard let key else {
            if case .limited(let retryAfter) = authFailures.take(key: client.limitKey, limit: failedAuthenticationLimit) {
                throw .tooManyFailedLogins(retryAfterSeconds: retryAfter)
            }
            throw .unauthorized(parts.count == 2 && parts[0].lowercased() == "bearer"
                ? "unknown API key" : "the Authorization header must be 'Bearer <key>'")
        }
        if let limit = key.rateLimit ?? defaultRateLimit,
           case .limited(let retryAfter) = rateLimiter.take(key: key.name, limit: limit) {
            throw .rateLimited(retryAfterSeconds: retryAfter)
        }
        return key
    }

    private func finish(_ request: HTTPRequest, client: ClientAddress, response: HTTPResponse, operation: String, keyName: String?,
                        requestID: String, clientRequestID: String? = nil, started: Double, app: String? = nil) {
        metrics.recordRequest(operation: operation, status: response.status)
        if let codes = response.problemCodes { metrics.recordProblem(code: codes.code, errors: codes.errors) }
        let elapsed = max(0, clock.wallSeconds() - started)
        log.record(RequestLog.Entry(time: started, requestID: requestID, clientRequestID: clientRequestID, keyName: keyName,
                                    method: request.method, path: request.path, query: request.query,
                                    userAgent: request.header("user-agent"), status: response.status,
                                    responseBytes: response.body.count,
                                    durationMicroseconds: Int(elapsed * 1_000_000), remoteAddress: client.client, app: app,
                                    peer: client.peer == client.client ? nil : client.peer))
    }
}

extension GatewayService {
    /// `body`'s answer, or the problem it threw as an `application/problem+json` answer:
    /// the one place a thrown problem becomes a response (handlers, the checks around
    /// them, answers made before routing and work handed to the upstream pool).
    static func rendering(_ body: () throws(Problem) -> HTTPResponse) -> HTTPResponse {
        do throws(Problem) { return try body() } catch { return error.response }
    }
}

extension HTTPResponse {
    /// `HTTPResponse.handOff` for an endpoint: `work` runs on the upstream pool and may
    /// throw its problem; `busy` answers when that pool's queue is full.
    static func handOff(throwing work: @escaping @Sendable () throws(Problem) -> HTTPResponse, busy: Problem) -> HTTPResponse {
        .handOff({ GatewayService.rendering(work) }, busy: { GatewayService.rendering { () throws(Problem) in throw busy } })
    }
}

/// 16 random hex digits: enough to find one request in the logs.
func randomRequestID() -> String {
    Hex.padded(UInt64.random(in: .min ... .max), width: 16)
}

/// JSON bodies: must say they are JSON, and must be strict JSON.
public enum JSONBody {
    public static let parser = JSONParser(maxDepth: 32, maxBytes: 64 << 20)

    public static func decode(_ request: HTTPRequest) throws(Problem) -> JSON {
        let contentType = request.header("content-type")
        guard let contentType, isJSON(contentType) else {
            throw .unsupportedMediaType(contentType)
        }
        do throws(JSONParseError) {
            return try parser.parse(request.body)
        } catch {
            throw .malformedJSON(error)
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = (contentType.split(separator: ";", maxSplits: 1).first ?? "")
            .trimmingCharacters(in: " \t").lowercased()
        return mediaType == "application/json"
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s = s.dropFirst() }
        while let last = s.last, set.contains(last) { s = s.dropLast() }
        return String(s)
    }
}

/// A JSON response.
public func jsonResponse(status: Int = 200, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
    HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
}
