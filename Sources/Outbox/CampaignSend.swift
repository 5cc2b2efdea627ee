import APNsCore
import APNs
import Storage

/// What a claimed device's send shares with the other devices of its campaign in one claim:
/// the sender chosen for the campaign's app and environment, and the labels its metrics
/// and its result need. One reference per device instead of a copy of each.
final class CampaignSend: Sendable {
    let sender: any NotificationSender
    let app: String
    let pushType: String
    let route: CampaignRoute
    /// A broadcast's answer is known by the apns-request-id it sent (APNs echoes it).
    let isBroadcast: Bool

    init(sender: any NotificationSender, message: OutboxMessage) {
        self.sender = sender
        app = message.stored.app
        pushType = message.stored.message.pushType
        route = message.stored.route
        isBroadcast = message.stored.message.channel != nil
    }
}

/// One claimed device, ready to go. A class: the answer's callback holds it with one
/// retain, not a copy of each of its strings and arrays.
final class SendItem: Sendable {
    let claim: ClaimedDelivery
    let request: APNsRequest
    let campaign: CampaignSend

    init(claim: ClaimedDelivery, request: APNsRequest, campaign: CampaignSend) {
        self.claim = claim
        self.request = request
        self.campaign = campaign
    }
}
