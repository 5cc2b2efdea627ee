import APNsCore
import Payloads
import Storage
import StrictJSON

extension DiagnosticCode {
    /// A claimed delivery whose campaign is no longer in the database.
    public static let campaignMissing = DiagnosticCode(rawValue: "campaignMissing")
    /// A stored campaign names a push type this pushgate does not know (written by another version).
    public static let unknownStoredPushType = DiagnosticCode(rawValue: "unknownStoredPushType")
    /// `send_at` more than a minute ago, or `expires_at` already past.
    public static let scheduleInPast = DiagnosticCode(rawValue: "scheduleInPast")
    /// `expires_at` not after `send_at`.
    public static let expiresBeforeSendAt = DiagnosticCode(rawValue: "expiresBeforeSendAt")
}

/// A campaign as the dispatcher sends it: the stored typed message, made into the
/// `APNsMessage` that builds every request (the function preview uses too).
final class OutboxMessage: Sendable {
    /// As stored (its app and environment choose the sender).
    let stored: CampaignMessage
    let dryRun: Bool
    /// nil when the stored push type is unknown here.
    let message: APNsMessage?
    let body: [UInt8]
    let apnsIDPrefix: String

    init(_ stored: CampaignMessage) {
        self.stored = stored
        dryRun = stored.dryRun
        message = PushType(rawValue: stored.message.pushType).map {
            APNsMessage(pushType: $0, topic: stored.message.topic, priority: stored.message.priority,
                        expiration: stored.message.expiration, collapseId: stored.message.collapseId, channel: stored.message.channel)
        }
        body = stored.body
        apnsIDPrefix = stored.apnsIDPrefix
    }

    /// The request for one claimed device; nil when the push type is unknown.
    func request(for claim: ClaimedDelivery) -> APNsRequest? {
        message?.request(to: claim.token, apnsID: CampaignMessage.apnsID(prefix: apnsIDPrefix, index: claim.index), body: claim.body ?? body)
    }
}

extension StoredMessage {
    /// The stored form of a plan's typed message.
    public init(_ message: APNsMessage) {
        self.init(pushType: message.pushType.rawValue, topic: message.topic, priority: message.priority,
                  expiration: message.expiration, collapseId: message.collapseId, channel: message.channel)
    }
}

/// What the outbox counts; the gateway's metrics implement it.
public protocol OutboxMetrics: Sendable {
    func setQueueDepth(_ depth: Int)
    /// Requests to APNs for `app` of `pushType`, each from its send to its answer.
    func recordAPNsLatencies(app: String, pushType: String, seconds: [Double])
    /// `count` devices that ended as `result` (a device state's name, or `retrying`) with
    /// `reason` (APNs' reason, or "").
    func recordNotifications(app: String, pushType: String, result: String, reason: String, count: Int)
    /// Deliveries of a claim that came back after its lease ran out, and were not sent.
    func recordLateClaim(_ deliveries: Int)
}
