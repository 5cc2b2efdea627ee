import APNsCore

/// What every device of a campaign shares in its APNs request, typed: the push type, the
/// topic, the priority and the optional expiration and collapse id. `request(to:apnsID:body:)`
/// is the one place an `APNsRequest` is put together — preview, `send` and the outbox's
/// dispatcher all go through it, so what a preview shows is what is sent.
public struct APNsMessage: Sendable, Equatable {
    public var pushType: PushType
    /// The bundle id with the push type's suffix.
    public var topic: String
    public var priority: Int
    /// `apns-expiration`, seconds since 1970 (0: deliver once or not at all).
    public var expiration: Int64?
    public var collapseId: String?
    /// A broadcast channel id: the request is a broadcast on that channel, not a push to a device.
    public var channel: String?

    public init(pushType: PushType, topic: String, priority: Int, expiration: Int64? = nil, collapseId: String? = nil,
                channel: String? = nil) {
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.channel = channel
    }

    /// The request path for a device: `/3/device/<token>`.
    public static func path(for token: String) -> String { "/3/device/" + token }

    /// The broadcast path of an app: `/4/broadcasts/apps/<bundle id>`.
    public static func broadcastPath(bundleId: String) -> String { "/4/broadcasts/apps/" + bundleId }

    /// The app's bundle id: the topic without its push type's suffix.
    public var bundleId: String {
        let suffix = pushType.topicSuffix
        return !suffix.isEmpty && topic.hasSuffix(suffix) ? String(topic.dropLast(suffix.utf8.count)) : topic
    }

    /// The exact request one device gets (the delivery layer adds `authorization`); for a
    /// channel, the one broadcast request (`token` is then the channel id).
    public func request(to token: String, apnsID: String, body: [UInt8]) -> APNsRequest {
        if let channel { return broadcast(on: channel, requestID: apnsID, body: body) }
        return APNsRequest(deviceToken: token, path: Self.path(for: token), pushType: pushType, topic: topic, priority: priority,
                           expiration: expiration, collapseId: collapseId, apnsID: apnsID, body: body)
    }

    /// Apple's broadcast request ("Sending broadcast push notification requests to APNs"):
    /// the bundle id in the path instead of `apns-topic`, the channel in `apns-channel-id`,
    /// no collapse id, and `apns-request-id` (which APNs echoes) in place of `apns-id`.
    func broadcast(on channel: String, requestID: String, body: [UInt8]) -> APNsRequest {
        APNsRequest(deviceToken: channel, path: Self.broadcastPath(bundleId: bundleId), pushType: pushType, topic: nil, channel: channel,
                    priority: priority, expiration: expiration, apnsID: requestID, body: body)
    }
}
