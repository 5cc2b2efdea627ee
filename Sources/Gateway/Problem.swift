import HTTPServer
import StrictJSON

/// An RFC 9457 problem: every error the API answers is one of these, with a stable
/// `code`, a readable `detail`, and the JSON pointers of every offending field.
public struct Problem: Error, Sendable, Equatable {
    public struct FieldError: Sendable, Equatable {
        public var pointer: String
        public var code: String
        public var detail: String

        public init(pointer: String, code: String, detail: String) {
            self.pointer = pointer
            self.code = code
            self.detail = detail
        }
    }

    public var status: Int
    public var code: String
    public var title: String
    public var detail: String
    public var errors: [FieldError]
    /// Extra headers (`Allow`, `Retry-After`, `WWW-Authenticate`).
    public var headers: [(name: String, value: String)]

    public init(status: Int, code: String, title: String, detail: String, errors: [FieldError] = [],
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

    public var response: HTTPResponse {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"type\":")
        w.string("urn:pushgate:problem:" + code)
        w.raw(",\"title\":")
        w.string(title)
        w.raw(",\"status\":")
        w.int(status)
        w.raw(",\"code\":")
        w.string(code)
        w.raw(",\"detail\":")
        w.string(detail)
        if !errors.isEmpty {
            w.raw(",\"errors\":[")
            for (i, error) in errors.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw("{\"pointer\":")
                w.string(error.pointer)
                w.raw(",\"code\":")
                w.string(error.code)
                w.raw(",\"detail\":")
                w.string(error.detail)
                w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        }
        w.raw("}\n")
        return HTTPResponse(status: status,
                            headers: [("Content-Type", "application/problem+json")] + headers,
                            body: w.bytes)
    }
}

extension Problem {
    static func malformedJSON(_ error: JSONParseError) -> Problem {
        let status = error.code == .tooLarge ? 413 : 400
        return Problem(status: status, code: error.code.rawValue, title: "Malformed JSON",
                       detail: "request body: line \(error.line), column \(error.column): \(error.message)",
                       errors: [FieldError(pointer: error.path.pointer, code: error.code.rawValue, detail: error.message)])
    }

    static func notFound(_ path: String) -> Problem {
        Problem(status: 404, code: "notFound", title: "Not Found",
                detail: "no resource at \(TextSafety.escapedForDisplay(path))")
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> Problem {
        Problem(status: 405, code: "methodNotAllowed", title: "Method Not Allowed",
                detail: "\(TextSafety.escapedForDisplay(method)) is not allowed here; allowed: \(allowed.joined(separator: ", "))",
                headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func unsupportedMediaType(_ contentType: String?) -> Problem {
        Problem(status: 415, code: "unsupportedMediaType", title: "Unsupported Media Type",
                detail: "the body must be application/json; got \(contentType.map { TextSafety.escapedForDisplay($0) } ?? "no Content-Type")")
    }

    static func bodyTooLarge(limit: Int) -> Problem {
        Problem(status: 413, code: "bodyTooLarge", title: "Content Too Large",
                detail: "the request body is over the limit of \(limit) bytes",
                headers: [("Connection", "close")])
    }

    static func unauthorized(_ detail: String) -> Problem {
        Problem(status: 401, code: "unauthorized", title: "Unauthorized", detail: detail,
                headers: [("WWW-Authenticate", "Bearer realm=\"pushgate\"")])
    }

    static func rateLimited(retryAfterSeconds: Int) -> Problem {
        Problem(status: 429, code: "rateLimited", title: "Too Many Requests",
                detail: "over this API key's rate limit; retry in \(retryAfterSeconds) s",
                headers: [("Retry-After", String(retryAfterSeconds))])
    }

    static let shuttingDown = Problem(status: 503, code: "shuttingDown", title: "Service Unavailable",
                                      detail: "the gateway is shutting down",
                                      headers: [("Connection", "close"), ("Retry-After", "5")])

    static func validation(_ errors: [FieldError], detail: String? = nil) -> Problem {
        let summary = detail ?? (errors.count == 1 ? errors[0].detail : "\(errors.count) problems in the request")
        return Problem(status: 422, code: errors.count == 1 ? errors[0].code : "validationFailed",
                       title: "Unprocessable Content", detail: summary, errors: errors)
    }
}
