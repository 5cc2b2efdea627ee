/// One HTTP/2 POST as the transport sends it.
public struct TransportRequest: Sendable {
    /// `/3/device/<token>`; the transport prefixes its base URL.
    public var path: String
    /// Header lines, `name: value`.
    public var headerLines: [String]
    public var body: [UInt8]

    public init(path: String, headerLines: [String], body: [UInt8]) {
        self.path = path
        self.headerLines = headerLines
        self.body = body
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
    func send(_ request: TransportRequest) async -> TransportOutcome
}
