/// Why no answer came from the server (APNs). Codes are stable.
public struct TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// The request's deadline passed with no response.
        case timeout
        /// TLS handshake or certificate verification failed.
        case tlsFailed
        /// The connection broke before an answer, every time it was sent (bounded).
        case connectionLost
        /// Sent the bounded number of times and never answered: refused streams (the
        /// server promised it did not process it) or GOAWAYs that did not cover it.
        case unanswered
        /// The server reset the stream (an HTTP/2 error code other than REFUSED_STREAM)
        /// after receiving the whole request: it may or may not have been delivered.
        case streamReset
        /// Not sent: APNs could not be reached (the circuit breaker is open).
        case unreachable
        /// Not sent: APNs refused the signing key (an authentication failure such as
        /// InvalidProviderToken, or TooManyProviderTokenUpdates), so sends with it are held;
        /// the message names the key, Apple's reason and what to do.
        case keyStopped
        /// The transport was shut down before the request finished.
        case cancelled
        /// Not sent, nothing of it reached APNs: the process is stopping (the transport
        /// starts no request any more, `stopStartingRequests`), its campaign or key was
        /// withdrawn, or no stream was free to write it on (`CurlLoop.maxUnwrittenReturns`).
        case notStarted
        /// Anything else libcurl reported.
        case transportError
    }

    public let code: Code
    public let message: String
    /// For `streamReset`: the RST_STREAM error code (RFC 9113 §7).
    public let http2ErrorCode: UInt32?

    public init(_ code: Code, _ message: String, http2ErrorCode: UInt32? = nil) {
        self.code = code
        self.message = message
        self.http2ErrorCode = http2ErrorCode
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
