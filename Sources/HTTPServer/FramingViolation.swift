/// Why a request was refused before any responder saw it: its head breaks HTTP/1.1's
/// message syntax (RFC 9112) in a way that two parsers could read differently, or it is
/// over a limit. The connection is always closed after the answer.
public struct FramingViolation: Error, Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        case malformedRequestLine
        case invalidRequestTarget
        case httpVersionNotSupported
        case requestLineTooLong
        case headersTooLarge
        case bareLineFeed
        case obsoleteLineFolding
        case controlCharacter
        case malformedHeader
        case ambiguousFraming
        case duplicateContentLength
        case invalidContentLength
        case unsupportedTransferEncoding
        case duplicateHost
        case missingHost
        case duplicateAuthorization
        case duplicateIdempotencyKey
        case tooManyQueryParameters
        case malformedChunk

        public var status: Int {
            switch self {
            case .httpVersionNotSupported: 505
            case .requestLineTooLong: 414
            case .headersTooLarge: 431
            default: 400
            }
        }
    }

    public var code: Code
    /// Says where (request line, header line N, header name) and what was expected. It
    /// never quotes the request's bytes.
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var status: Int { code.status }

    /// The header the rule is about, when it is about one.
    public var header: String? {
        switch code {
        case .ambiguousFraming, .unsupportedTransferEncoding: "Transfer-Encoding"
        case .duplicateContentLength, .invalidContentLength: "Content-Length"
        case .duplicateHost, .missingHost: "Host"
        case .duplicateAuthorization: "Authorization"
        case .duplicateIdempotencyKey: "Idempotency-Key"
        default: nil
        }
    }
}
