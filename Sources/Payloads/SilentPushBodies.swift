import APNsCore
import StrictJSON

/// The push types whose body is fixed by Apple and shows nothing: `widgets` and `controls`
/// (WidgetKit reloads the widget's timelines, or the control:
/// `{"aps":{"content-changed":true}}`) and `mdm` (a managed device polls its MDM server:
/// `{"mdm":"<PushMagic>"}` and nothing else). Apple, "Updating widgets with WidgetKit push
/// notifications"; "Updating controls locally and remotely"; "Sending MDM commands to a
/// device".
enum SilentPushBodies {
    /// Campaign members these bodies have no place for.
    static let members: [(key: String, given: @Sendable (Campaign) -> Bool)] = [
        ("badge", { $0.badge != nil }),
        ("sound", { $0.sound != nil }),
        ("category", { $0.category != nil }),
        ("thread_id", { $0.threadId != nil }),
        ("content_available", { $0.contentAvailable == true }),
        ("mutable_content", { $0.mutableContent == true }),
        ("target_content_id", { $0.targetContentId != nil }),
        ("interruption_level", { $0.interruptionLevel != nil }),
        ("relevance_score", { $0.relevanceScore != nil }),
        ("deeplink", { $0.deeplink != nil }),
        ("data", { !$0.data.isEmpty }),
        ("truncate", { $0.truncate }),
    ]

    static func problems(_ campaign: Campaign, pushType: PushType) -> [PayloadError] {
        let what = pushType == .mdm ? "an MDM push is {\"mdm\": PushMagic} and nothing else"
            : "a \(pushType.rawValue) push is {\"aps\":{\"content-changed\":true}} and nothing else"
        var problems: [PayloadError] = []
        switch campaign.message {
        case .template: problems.append(PayloadError(.pushTypeForbidsMember, at: .root.appending("template"), "a template's text cannot go in it: \(what)"))
        case .inline: problems.append(PayloadError(.pushTypeForbidsMember, at: .root.appending("alert"), "an alert cannot go in it: \(what)"))
        case .none: break
        }
        for member in members where member.given(campaign) {
            problems.append(PayloadError(.pushTypeForbidsMember, at: .root.appending(member.key), "\(member.key) cannot go in it: \(what)"))
        }
        if pushType == .mdm, campaign.mdm == nil {
            problems.append(PayloadError(.missing, at: .root.appending("mdm"),
                                         "missing: an mdm push carries the device's PushMagic (its check-in gave it), e.g. \"mdm\": \"{{push_magic}}\" with the value per device"))
        }
        return problems
    }
}
