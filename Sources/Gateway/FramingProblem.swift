import HTTPServer
import StrictJSON

/// The codes of a request the HTTP server refused before routing it (RFC 9112 framing).
extension DiagnosticCode {
    /// The top-level code of a 400 for a head that breaks a framing rule; `errors[0]` says which.
    public static let malformedRequest = DiagnosticCode(rawValue: "malformedRequest")
    public static let requestLineTooLong = DiagnosticCode(rawValue: FramingViolation.Code.requestLineTooLong.rawValue)
    public static let headersTooLarge = DiagnosticCode(rawValue: FramingViolation.Code.headersTooLarge.rawValue)
    public static let httpVersionNotSupported = DiagnosticCode(rawValue: FramingViolation.Code.httpVersionNotSupported.rawValue)
}

extension DiagnosticDomain {
    /// What can be wrong with a request's framing: the codes in a `malformedRequest`
    /// problem's `errors[]`. (Heads too long and unsupported versions are problems of
    /// their own, with their own status.)
    public static let framing = DiagnosticDomain("framing", FramingViolation.Code.allCases
        .filter { $0.status == 400 }.map { DiagnosticCode(rawValue: $0.rawValue) })
}

extension Problem {
    /// A refused head: 400 `malformedRequest` naming the rule in `errors[0]`, or 414, 431,
    /// 505 as their own problems. Always with `Connection: close`.
    static func framing(_ violation: FramingViolation) -> Problem {
        let close = [(name: "Connection", value: "close")]
        switch violation.status {
        case 414:
            return Problem(status: 414, code: .requestLineTooLong, title: "URI Too Long", detail: violation.detail, headers: close)
        case 431:
            return Problem(status: 431, code: .headersTooLarge, title: "Request Header Fields Too Large",
                           detail: violation.detail, headers: close)
        case 505:
            return Problem(status: 505, code: .httpVersionNotSupported, title: "HTTP Version Not Supported",
                           detail: violation.detail, headers: close)
        default:
            let diagnostic = Diagnostic(DiagnosticCode(rawValue: violation.code.rawValue),
                                        at: violation.header.map { .header($0) } ?? .none, violation.detail)
            return Problem(status: 400, code: .malformedRequest, title: "Bad Request", detail: diagnostic.description,
                           errors: [diagnostic], headers: close)
        }
    }
}
