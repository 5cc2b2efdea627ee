/// One HTTP header, name in lowercase as HTTP/2 requires.
public struct HTTPHeader: Sendable, Equatable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The exact request APNs will receive for one device, except the `authorization`
/// header, which the delivery layer adds with its provider token.
public struct APNsRequest: Sendable, Equatable {
    /// Lowercase hex device token.
    public var deviceToken: String
    /// `/3/device/<token>`.
    public var path: String
    /// In a fixed order: apns-push-type, apns-topic, apns-priority, then the optional ones.
    public var headers: [HTTPHeader]
    /// The JSON body, byte for byte.
    public var body: [UInt8]
    /// Its owner's (a campaign's) ticket: once the owner is withdrawn (cancelled, paused),
    /// the request is not written if it has not been yet (`TransportFailure.notStarted`).
    public var withdrawal: Withdrawal.Ticket?

    public var method: String { "POST" }

    public init(deviceToken: String, path: String, headers: [HTTPHeader], body: [UInt8]) {
        self.deviceToken = deviceToken
        self.path = path
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
