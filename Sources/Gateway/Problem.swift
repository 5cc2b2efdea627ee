import HTTPServer
import StrictJSON

/// An RFC 9457 problem: every error the API answers is one of these. Its `code` names
/// the kind of problem (`validationFailed`, `invalidQuery`, `notFound`, …) and never
/// depends on how many things are wrong; `errors` holds each `Diagnostic` with its own
/// code and its location as its own member (`pointer`, `parameter`, `header`, `line`).
public struct Problem: Error, Sendable, Equatable {
    public var status: Int
    public var code: DiagnosticCode
    public var title: String
    public var detail: String
    public var errors: [Diagnostic]
    /// Extra headers (`Allow`, `Retry-After`, `WWW-Authenticate`).
    public var headers: [(name: String, value: String)]

    public init(status: Int, code: DiagnosticCode, title: String, detail: String, errors: [Diagnostic] = [],
                headers: [(name: String, value: String)] = []) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    public static func == (a: Problem, b: Problem) -> Bool {
        a.status == b.status && a.code == b.code && a.detail == b.detail && a.errors == b.errors
    }

    /// At most this many entries in `errors`; `detail` gives the full count.
    public static let maxListed = 100
    /// No problem answer is larger than this, whatever the input: messages and
    /// locations are clipped, and entries that would not fit are left out (and counted).
    public static let maxResponseBytes = 64 * 1024
    static let maxTextBytes = 1024

    public var response: HTTPResponse {
        // Entries first, so `detail` can say how many made it.
        var entries: [[UInt8]] = []
        var used = 1024 + TextSafety.clipped(detail, maxBytes: Problem.maxTextBytes).utf8.count
        for error in errors.prefix(Problem.maxListed) {
            var w = JSONWriter(capacity: 128)
            Problem.bounded(error).append(to: &w)
            if used + w.bytes.count + 1 > Problem.maxResponseBytes - 128 { break }
            used += w.bytes.count + 1
            entries.append(w.bytes)
        }
        var shownDetail = TextSafety.clipped(detail, maxBytes: Problem.maxTextBytes)
        if entries.count < errors.count {
            let said = Problem.listedNote(errors.count)
            shownDetail = shownDetail.contains(said)
                ? shownDetail.replacing(said, with: Problem.listedNote(entries.count))
                : shownDetail + " (the first \(entries.count) of \(errors.count) are listed)"
        }
        var w = JSONWriter(capacity: 256 + used)
        w.object { w in
            w.member("type", "urn:pushgate:problem:" + code.rawValue)
            w.member("title", title)
            w.member("status", status)
            w.member("code", code.rawValue)
            w.member("detail", shownDetail)
            if !entries.isEmpty {
                w.member("errors", array: { w in
                    for entry in entries { w.serialized(entry) }
                })
            }
        }
        w.raw("\n")
        var response = HTTPResponse(status: status,
                                    headers: [("Content-Type", "application/problem+json")] + headers,
                                    body: w.bytes)
        response.problemCodes = (code.rawValue, errors.map(\.code.rawValue))
        return response
    }

    static func listedNote(_ count: Int) -> String { "(the first \(count) are listed)" }

    /// The diagnostic with its message and every key of its location clipped.
    static func bounded(_ diagnostic: Diagnostic) -> Diagnostic {
        var bounded = diagnostic
        bounded.message = TextSafety.clipped(diagnostic.message, maxBytes: maxTextBytes)
        func clip(_ path: JSONPath) -> JSONPath {
            JSONPath(path.components.prefix(64).map { component in
                if case .key(let key) = component { return .key(TextSafety.clipped(key, maxBytes: 256)) }
                return component
            })
        }
        switch diagnostic.location {
        case .pointer(let path): bounded.location = .pointer(clip(path))
        case .file(let file, let path): bounded.location = .file(TextSafety.clipped(file, maxBytes: 256), at: clip(path))
        case .parameter(let name): bounded.location = .parameter(TextSafety.clipped(name, maxBytes: 256))
        case .header(let name): bounded.location = .header(TextSafety.clipped(name, maxBytes: 256))
        default: break
        }
        return bounded
    }
}

/// The kinds of problem the API answers with: the top-level `code` of every problem.
extension DiagnosticCode {
    public static let malformedJSON = DiagnosticCode(rawValue: "malformedJSON")
    public static let validationFailed = DiagnosticCode(rawValue: "validationFailed")
    public static let invalidQuery = DiagnosticCode(rawValue: "invalidQuery")
    public static let invalidHeader = DiagnosticCode(rawValue: "invalidHeader")
    public static let unauthorized = DiagnosticCode(rawValue: "unauthorized")
    public static let notFound = DiagnosticCode(rawValue: "notFound")
    public static let methodNotAllowed = DiagnosticCode(rawValue: "methodNotAllowed")
    public static let idempotencyKeyReused = DiagnosticCode(rawValue: "idempotencyKeyReused")
    public static let bodyTooLarge = DiagnosticCode(rawValue: "bodyTooLarge")
    public static let unsupportedMediaType = DiagnosticCode(rawValue: "unsupportedMediaType")
    public static let rateLimited = DiagnosticCode(rawValue: "rateLimited")
    public static let shuttingDown = DiagnosticCode(rawValue: "shuttingDown")
    public static let overloaded = DiagnosticCode(rawValue: "overloaded")
    public static let storageUnavailable = DiagnosticCode(rawValue: "storageUnavailable")

    // What can be wrong with a request beyond its body's JSON.
    /// A query parameter the endpoint does not take.
    public static let unknownParameter = DiagnosticCode(rawValue: "unknownParameter")
    /// A query parameter given more than once.
    public static let duplicateParameter = DiagnosticCode(rawValue: "duplicateParameter")
    /// `Idempotency-Key` is not 1–255 visible ASCII characters.
    public static let invalidIdempotencyKey = DiagnosticCode(rawValue: "invalidIdempotencyKey")
    /// `links` is empty or longer than a batch may be.
    public static let invalidBatchSize = DiagnosticCode(rawValue: "invalidBatchSize")
    /// An `application/x-ndjson` campaign lists devices in its first line.
    public static let devicesInHeader = DiagnosticCode(rawValue: "devicesInHeader")
    /// A trusted proxy's `Forwarded` or `X-Forwarded-For` breaks its syntax.
    public static let invalidForwarding = DiagnosticCode(rawValue: "invalidForwarding")
    /// A trusted proxy's forwarding header is over 2048 bytes or 32 hops.
    public static let forwardingTooLarge = DiagnosticCode(rawValue: "forwardingTooLarge")
    /// `Forwarded` and `X-Forwarded-For` name different hops.
    public static let conflictingForwarding = DiagnosticCode(rawValue: "conflictingForwarding")
}

extension DiagnosticDomain {
    /// The top-level `code` of a problem, with its HTTP status.
    public static let problemStatus: [(code: DiagnosticCode, status: Int)] = [
        (.malformedJSON, 400), (.invalidQuery, 400), (.invalidHeader, 400), (.unauthorized, 401), (.foreignRequest, 403),
        (.notFound, 404), (.methodNotAllowed, 405), (.idempotencyKeyReused, 409), (.campaignFinished, 409), (.partConflict, 409),
        (.notFilling, 409), (.bodyTooLarge, 413),
        (.unsupportedMediaType, 415), (.validationFailed, 422), (.confirmationRequired, 422), (.rateLimited, 429),
        (.shuttingDown, 503), (.storageUnavailable, 503), (.overloaded, 503),
        (.channelsUnavailable, 409), (.apnsRefused, 502), (.apnsUnavailable, 503), (.upstreamBusy, 503), (.registryFull, 422),
        (.malformedRequest, 400), (.requestLineTooLong, 414), (.headersTooLarge, 431), (.httpVersionNotSupported, 505),
    ]
    public static let problem = DiagnosticDomain("problem", problemStatus.map(\.code))
    public static let request = DiagnosticDomain("request", [.unknownParameter, .duplicateParameter, .invalidIdempotencyKey, .invalidBatchSize,
                                                              .devicesInHeader, .foreignHost, .foreignOrigin, .proxiedRequest,
                                                              .invalidForwarding, .forwardingTooLarge, .conflictingForwarding])
}

extension Problem {
    /// 400 for JSON that is not strict JSON; 413 for a document over the parser's limit.
    static func malformedJSON(_ error: JSONParseError) -> Problem {
        let diagnostic = error.diagnostic()
        if error.code == .tooLarge {
            return Problem(status: 413, code: .bodyTooLarge, title: "Content Too Large",
                           detail: "request body: \(error.message)", errors: [diagnostic])
        }
        return Problem(status: 400, code: .malformedJSON, title: "Malformed JSON",
                       detail: "request body: line \(error.line), column \(error.column): \(error.message)",
                       errors: [diagnostic])
    }

    static func notFound(_ path: String) -> Problem {
        Problem(status: 404, code: .notFound, title: "Not Found",
                detail: "no resource at \(TextSafety.excerpt(path))")
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> Problem {
        Problem(status: 405, code: .methodNotAllowed, title: "Method Not Allowed",
                detail: "\(TextSafety.excerpt(method)) is not allowed here; allowed: \(allowed.joined(separator: ", "))",
                headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func unsupportedMediaType(_ contentType: String?) -> Problem {
        Problem(status: 415, code: .unsupportedMediaType, title: "Unsupported Media Type",
                detail: "the body must be application/json; got \(contentType.map { TextSafety.excerpt($0) } ?? "no Content-Type")")
    }

    static func bodyTooLarge(limit: Int) -> Problem {
        Problem(status: 413, code: .bodyTooLarge, title: "Content Too Large",
                detail: "the request body is over the limit of \(limit) bytes",
                headers: [("Connection", "close")])
    }

    static func unauthorized(_ detail: String) -> Problem {
        Problem(status: 401, code: .unauthorized, title: "Unauthorized", detail: detail,
                headers: [("WWW-Authenticate", "Bearer realm=\"pushgate\"")])
    }

    static func rateLimited(retryAfterSeconds: Int) -> Problem {
        Problem(status: 429, code: .rateLimited, title: "Too Many Requests",
                detail: "over this API key's rate limit; retry in \(retryAfterSeconds) s",
                headers: [("Retry-After", String(retryAfterSeconds))])
    }

    static func tooManyFailedLogins(retryAfterSeconds: Int) -> Problem {
        Problem(status: 429, code: .rateLimited, title: "Too Many Requests",
                detail: "too many failed authentication attempts from this address; retry in \(retryAfterSeconds) s",
                headers: [("Retry-After", String(retryAfterSeconds))])
    }

    /// 400: a trusted proxy's forwarding headers cannot be read exactly, so the client
    /// is not known; answered rather than guessed.
    static func forwarding(_ problem: ForwardingProblem) -> Problem {
        Problem(status: 400, code: .invalidHeader, title: "Bad Request",
                detail: problem.code == .conflictingForwarding ? problem.detail : "\(problem.header): \(problem.detail)",
                errors: [Diagnostic(DiagnosticCode(rawValue: problem.code.rawValue), at: .header(problem.header), problem.detail)])
    }

    static let overloaded = Problem(status: 503, code: .overloaded, title: "Service Unavailable",
                                    detail: "every worker is busy and the queue is full; retry shortly",
                                    headers: [("Retry-After", "1")])

    static let shuttingDown = Problem(status: 503, code: .shuttingDown, title: "Service Unavailable",
                                      detail: "the gateway is shutting down",
                                      headers: [("Connection", "close"), ("Retry-After", "5")])

    /// 422: valid JSON that fails validation. `detail` summarises; `errors` lists each.
    static func validation(_ errors: [Diagnostic], detail: String? = nil) -> Problem {
        let listed = errors.count > maxListed ? " " + listedNote(maxListed) : ""
        let summary = detail ?? (errors.count == 1 ? errors[0].description : "\(errors.count) problems in the request" + listed)
        return Problem(status: 422, code: .validationFailed, title: "Unprocessable Content", detail: summary,
                       errors: Array(errors.prefix(maxListed)))
    }

    /// 400: the query string names parameters the endpoint does not take, or bad values.
    static func invalidQuery(_ errors: [Diagnostic]) -> Problem {
        Problem(status: 400, code: .invalidQuery, title: "Bad Request",
                detail: errors.map(\.description).joined(separator: "; "), errors: errors)
    }
}
