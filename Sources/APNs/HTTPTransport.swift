import Payloads

/// One HTTP/2 POST as the transport sends it. The parts stay as they are (no header line
/// is put together here): the transport writes them into memory it keeps per easy handle,
/// so a request costs no string building.
public struct TransportRequest: Sendable {
    /// `/3/device/<token>`; the transport prefixes its base URL.
    public var path: String
    /// The `authorization` header's value (`bearer <JWT>`), nil for none.
    public var authorization: String?
    /// The other headers, in order.
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(path: String, authorization: String?, headers: [HTTPHeader], body: [UInt8]) {
        self.path = path
        self.authorization = authorization
        self.headers = headers
        self.body = body
    }

    /// The header lines as sent (`name: value`), authorization first.
    public var headerLines: [String] {
        (authorization.map { ["authorization: " + $0] } ?? []) + headers.map { $0.name + ": " + $0.value }
    }
}

/// What the server answered. Only the headers APNs results depend on are kept.
public struct TransportResponse: Sendable, Equatable {
    public var status: Int
    public var apnsId: String?
    /// `apns-unique-id`: the sandbox's id for the notification in the Push Notifications
    /// Console (Apple sends it in the development environment only).
    public var uniqueId: String?
    public var retryAfter: String?
    public var body: [UInt8]

    public init(status: Int, apnsId: String? = nil, uniqueId: String? = nil, retryAfter: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.apnsId = apnsId
        self.uniqueId = uniqueId
        self.retryAfter = retryAfter
        self.body = body
    }
}

public enum TransportOutcome: Sendable, Equatable {
    case response(TransportResponse)
    case failure(TransportFailure)
}

/// Sends one request and waits for its answer. The libcurl transport implements it;
/// tests and benchmarks can substitute their own.
public protocol HTTPTransport: Sendable {
    nonisolated(nonsending) func send(_ request: TransportRequest) async -> TransportOutcome
}
