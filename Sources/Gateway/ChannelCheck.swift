import APNs
import Payloads
import StrictJSON

/// Before a channel campaign is stored or sent, its channel is read at Apple (`GET
/// /1/apps/<bundle id>/channels`), once, waiting for the answer on the server's upstream
/// pool (never a worker that other campaigns need, see `HTTPResponse.handOff`): a channel
/// that does not exist in the campaign's environment, or one that stores no message while
/// the campaign's `expiration` is not 0, is refused now rather than failing in the outbox.
/// When Apple cannot be asked or refuses otherwise, the campaign is accepted unchecked: the
/// outbox must not depend on Apple being up, and the broadcast's own answer is recorded.
public enum ChannelCheck {
    /// What Apple's answer refuses, at its pointer (`/channel` or `/expiration`); nil: go on.
    public static func finding(_ plan: CampaignPlan, channel: String, client: ChannelManagementClient) -> Diagnostic? {
        let result = runAndWait { await client.perform(.read(channelId: channel)) }
        let request = result.requestId.map { " (apns-request-id \($0))" } ?? ""
        switch result.outcome {
        case .success(.channel(let found)) where found.storagePolicy == .noMessageStored && plan.campaign.expiration != 0:
            let pointer = JSONPath.root.appending(plan.campaign.expiration != nil ? "expiration" : "channel")
            return Diagnostic(.channelStoresNoMessage, at: .pointer(pointer),
                              "channel \(channel) stores no message (message-storage-policy 0): Apple takes only broadcasts with apns-expiration 0 on it; give \"expiration\": 0")
        case .failure(.refused(_, let reason)) where reason == .channelNotRegistered:
            return Diagnostic(DiagnosticCode(rawValue: reason.rawValue), at: .pointer(JSONPath.root.appending("channel")),
                              ChannelFailure.refused(status: 400, reason: reason).message + request)
        default:
            return nil
        }
    }
}
