import Timing

/// One HTTP header as shown (a preview, a dry run), name in lowercase as HTTP/2 requires.
public struct HTTPHeader: Sendable, Equatable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The exact request APNs will receive for one device (or, with a channel, the one
/// broadcast), except the `authorization` header, which the delivery layer adds with its
/// provider token. Every header travels typed; `forEachHeader` is the one place their
/// names, values and order are written.
public struct APNsRequest: Sendable, Equatable {
    /// Lowercase hex device token; for a broadcast, the channel id.
    public var deviceToken: String
    /// `/3/device/<token>`, or `/4/broadcasts/apps/<bundle id>` for a broadcast.
    public var path: String
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-topic`; nil for a broadcast, whose bundle id is in the path.
    public var topic: String?
    /// `apns-channel-id`: the request is a broadcast on that channel.
    public var channel: String?
    /// `apns-priority`.
    public var priority: Int
    /// `apns-expiration`, seconds since 1970 (0: deliver once or not at all).
    public var expiration: Int64?
    /// `apns-collapse-id` (never on a broadcast).
    public var collapseId: String?
    /// The request's own id: `apns-id` for a device, `apns-request-id` (which APNs echoes)
    /// for a broadcast; nil lets APNs choose the `apns-id`.
    public var apnsID: String?
    /// The JSON body, byte for byte.
    public var body: [UInt8]
    /// Its owner's (a campaign's) ticket: once the owner is withdrawn (cancelled, paused),
    /// the request is not written if it has not been yet (`TransportFailure.notStarted`).
    public var withdrawal: Withdrawal.Ticket?

    public var method: String { "POST" }

    public init(deviceToken: String, path: String, pushType: PushType, topic: String?, channel: String? = nil,
                priority: Int, expiration: Int64? = nil, collapseId: String? = nil, apnsID: String? = nil, body: [UInt8]) {
        self.deviceToken = deviceToken
        self.path = path
        self.pushType = pushType
        self.topic = topic
        self.channel = channel
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.apnsID = apnsID
        self.body = body
    }

    /// Whether this is a broadcast on a channel rather than a push to a device.
    public var isBroadcast: Bool { channel != nil }

    /// The same request with `topic` (an app's configured override) in place of the
    /// campaign's; a broadcast, which has no topic, stays as it is.
    public func replacingTopic(with topic: String) -> APNsRequest {
        guard self.topic != nil else { return self }
        var replaced = self
        replaced.topic = topic
        return replaced
    }

    /// The headers in wire order (Apple's: push type, topic or channel, priority, then the
    /// optional ones, the id last), `authorization` aside: the one place a typed field
    /// becomes a header line. The transport's request, the dry run and the preview are all
    /// written from it.
    @inlinable
    public func forEachHeader(_ visit: (_ name: String, _ value: String) -> Void) {
        visit("apns-push-type", pushType.rawValue)
        if let topic { visit("apns-topic", topic) }
        if let channel { visit("apns-channel-id", channel) }
        visit("apns-priority", String(priority))
        if let expiration { visit("apns-expiration", String(expiration)) }
        if let collapseId { visit("apns-collapse-id", collapseId) }
        if let apnsID { visit(channel == nil ? "apns-id" : "apns-request-id", apnsID) }
    }

    /// The headers as shown (a preview, a dry run): `forEachHeader`, collected.
    public var headers: [HTTPHeader] {
        var headers: [HTTPHeader] = []
        headers.reserveCapacity(7)
        forEachHeader { headers.append(HTTPHeader($0, $1)) }
        return headers
    }
}
