#if canImport(Glibc)
import APNsCore
import Glibc
#endif
import DeepLinks
import StrictJSON
import Timing

/// Validates a campaign against the route table, the templates and the topic, and turns
/// it into a `CampaignPlan` — or into every problem found, each with its JSON path.
public struct CampaignPlanner: Sendable {
    /// The app's bundle id; push types add their suffix.
    public var bundleId: String
    public var links: any DeepLinkChecking
    public var templates: any TemplateStore
    /// When false, a campaign without `devices` is accepted (the sender brings them).
    public var requireDevices: Bool
    /// UNIX seconds now: a Live Activity's `timestamp` when the campaign gives none.
    public var now: @Sendable () -> Int64
    /// How the sender authenticates with APNs. pushgate signs with provider tokens only,
    /// and Apple takes MDM pushes only with the MDM push certificate, so with `.token`
    /// every `mdm` campaign is refused (`mdmRequiresCertificate`).
    public var authentication: ProviderAuthentication = .token

    public init(bundleId: String, links: any DeepLinkChecking, templates: any TemplateStore, requireDevices: Bool = true,
                clock: any TimeSource) {
        now = { clock.secondsSince1970() }
        self.bundleId = bundleId
        self.links = links
        self.templates = templates
        self.requireDevices = requireDevices
    }

    /// Campaign JSON (a file's or a request body's bytes) → plan or problems.
    public func plan(jsonBytes: [UInt8]) -> Result<CampaignPlan, CampaignRejection> {
        plan(read: CampaignReader.readAll(jsonBytes: jsonBytes))
    }

    /// The same for a document already parsed (an HTTP body the service has checked).
    public func plan(json: JSON) -> Result<CampaignPlan, CampaignRejection> {
        plan(read: CampaignReader.readAll(json))
    }

    private func plan(read: (Campaign?, [PayloadError])) -> Result<CampaignPlan, CampaignRejection> {
        let (campaign, problems) = read
        guard let campaign else { return .failure(CampaignRejection(problems: problems)) }
        return plan(campaign, problemsSoFar: problems)
    }

    public func plan(_ campaign: Campaign) -> Result<CampaignPlan, CampaignRejection> {
        plan(campaign, problemsSoFar: [])
    }

    /// Goes on after problems in the document's shape, so that the per-device checks
    /// (variables, links, sizes) are reported with them.
    func plan(_ given: Campaign, problemsSoFar: [PayloadError]) -> Result<CampaignPlan, CampaignRejection> {
        var problems = problemsSoFar
        // A channel campaign's one recipient is the channel: the rest of planning, preview,
        // intake and sending see it as the campaign's only device.
        var campaign = given
        if let channel = given.channel, given.devices.isEmpty { campaign.devices = [Device(token: channel)] }
        var templateMissing = false
        let templatePath = JSONPath.root.appending("template")

        // The template, and the alert text it or the campaign gives.
        var template: Template?
        var strings = Template.Strings()
        var inline: InlineAlert?
        switch campaign.message {
        case .template(let name, _) where !TemplateName.isValid(name):
            templateMissing = true  // the reader has said why
        case .template(let name, let locale):
            switch templates.lookup(name) {
            case .found(let t):
                template = t
                strings = t.strings(for: locale)
            case .notFound:
                templateMissing = true
                problems.append(PayloadError(.unknownTemplate, at: templatePath, "no template named \(TextSafety.quoted(name))"))
            case .invalid(let inner):
                templateMissing = true
                for p in inner {
                    problems.append(PayloadError(.invalidTemplate, at: templatePath,
                                                 "template \(TextSafety.quoted(name)) at \(p.path): \(p.message)"))
                }
            }
        case .inline(let alert):
            inline = alert
            strings = Template.Strings(title: alert.title.map(TemplateText.init(literal:)),
                                       subtitle: alert.subtitle.map(TemplateText.init(literal:)),
                                       body: alert.body.map(TemplateText.init(literal:)))
        case .none:
            break
        }
        let defaults = template?.defaults ?? Template.Defaults()
        let implied: PushType? = campaign.liveActivity != nil || campaign.channel != nil ? .liveactivity : campaign.mdm != nil ? .mdm : nil
        // A Live Activity template's campaign without live_activity updates the activity.
        let liveActivity = campaign.liveActivity ?? (template?.liveActivity != nil ? LiveActivity(event: .update) : nil)
        let pushType = campaign.pushType ?? implied ?? defaults.pushType ?? .alert
        let sound = campaign.sound ?? defaults.sound
        let interruptionLevel = campaign.interruptionLevel ?? defaults.interruptionLevel
        let hasAlert = strings.title != nil || strings.subtitle != nil || strings.body != nil || (inline.map { !$0.isEmpty } ?? false)
        let alertPath = inline != nil ? JSONPath.root.appending("alert") : templatePath

        // Apple's rules that join several fields.
        var contentAvailable = campaign.contentAvailable ?? false
        if pushType == .background {
            let p = JSONPath.root
            if campaign.contentAvailable == false {
                problems.append(PayloadError(.backgroundRequiresContentAvailable, at: p.appending("content_available"), "a background push must carry content-available: 1"))
            }
            contentAvailable = true
            if let priority = campaign.priority, priority != 5 {
                problems.append(PayloadError(.backgroundRequiresPriority5, at: p.appending("priority"), "a background push must have priority 5, found \(priority)"))
            }
            if hasAlert { problems.append(PayloadError(.backgroundForbidsAlert, at: alertPath, "a background push must not carry an alert")) }
            if sound != nil {
                problems.append(PayloadError(.backgroundForbidsSound, at: campaign.sound != nil ? p.appending("sound") : templatePath, "a background push must not play a sound"))
            }
            if campaign.badge != nil { problems.append(PayloadError(.backgroundForbidsBadge, at: p.appending("badge"), "a background push must not set a badge")) }
        } else if pushType == .alert, !hasAlert, sound == nil, campaign.badge == nil, !contentAvailable, template == nil, problems.isEmpty {
            problems.append(PayloadError(.nothingToSend, at: .root.appending("alert"),
                                         "missing: an alert push needs an alert (or a template), a sound or a badge"))
        }
        let priority = campaign.priority ?? pushType.defaultPriority
        if priority == 1 {
            problems += Self.priorityOneProblems(campaign, sound: sound, interruptionLevel: interruptionLevel,
                                                 soundPath: campaign.sound != nil ? .root.appending("sound") : templatePath,
                                                 levelPath: campaign.interruptionLevel != nil ? .root.appending("interruption_level") : templatePath)
        }
        if pushType == .mdm, authentication == .token {
            problems.append(PayloadError(.mdmRequiresCertificate, at: campaign.pushType != nil ? .root.appending("push_type") : .root.appending("mdm"),
                                         "APNs takes MDM pushes only over a connection authenticated with the MDM push certificate (Apple: \"MDM doesn't support the token based push process\"); pushgate signs with provider tokens, so it cannot send them"))
        }
        if campaign.channel != nil {
            problems += Self.channelProblems(campaign, pushType: pushType, activity: liveActivity, templatePath: templatePath)
        }
        let now = self.now()
        if pushType == .liveactivity {
            if let activity = liveActivity {
                // Apple's broadcast page names low priority (1) beside medium and high.
                let checkedPriority = campaign.channel != nil && campaign.priority == 1 ? nil : campaign.priority
                problems += LiveActivityRules.problems(
                    campaign, activity: activity, template: template?.liveActivity, priority: checkedPriority,
                    hasTitle: strings.title != nil || inline?.titleLocKey != nil, hasBody: strings.body != nil || inline?.locKey != nil,
                    alertPath: alertPath, now: now, reported: problems)
            } else if !problems.contains(where: { $0.path.description.hasPrefix("live_activity") }) {
                problems.append(PayloadError(.missing, at: .root.appending("live_activity"),
                                             "missing: a liveactivity push needs live_activity (its event and content)"))
            }
        } else if campaign.liveActivity != nil || template?.liveActivity != nil {
            let what = campaign.liveActivity != nil ? "live_activity" : "a template with live_activity"
            problems.append(PayloadError(.conflictingFields, at: campaign.pushType != nil ? .root.appending("push_type") : templatePath,
                                         "\(what) goes with push_type \"liveactivity\", not \"\(pushType.rawValue)\""))
        }
        if pushType == .widgets || pushType == .controls || pushType == .mdm {
            problems += SilentPushBodies.problems(campaign, pushType: pushType)
        } else if campaign.mdm != nil {
            problems.append(PayloadError(.conflictingFields, at: campaign.pushType != nil ? .root.appending("push_type") : templatePath,
                                         "mdm goes with push_type \"mdm\", not \"\(pushType.rawValue)\""))
        }

        // The deep link: the campaign's own, or the template's pattern.
        var link: CanonicalLink?
        var deviceLink: DeviceLink?
        var linkBytes: [UInt8]?
        if let text = campaign.deeplink {
            switch links.check(text) {
            case .accepted(let canonical):
                link = canonical
                linkBytes = LinkFragment.bytes(for: canonical)
            case .rejected(let rejection):
                problems.append(PayloadError(.deeplinkRejected, at: .root.appending("deeplink"), rejection.message, linkCode: rejection.code))
            }
        } else if let pattern = template?.deeplink {
            let dl = DeviceLink(pattern: pattern, campaignVariables: campaign.variables, checker: links)
            if dl.variableNames.isEmpty || !campaign.devices.contains(where: { $0.variables.contains { v in dl.variableNames.contains(v.name) } }) {
                // No device changes the link: one check for the whole campaign.
                switch dl.shared {
                case .success(let resolved):
                    link = resolved.link
                    if dl.variableNames.isEmpty { linkBytes = resolved.bytes } else { deviceLink = dl }
                case .failure(let e) where e.code == .missingVariable:
                    deviceLink = dl  // reported per device below; streamed devices may bring it
                case .failure(let e):
                    problems.append(PayloadError(e.code, at: dl.variableNames.isEmpty ? templatePath : e.path, e.message, linkCode: e.linkCode))
                }
            } else {
                deviceLink = dl
            }
        }

        if requireDevices && campaign.devices.isEmpty && campaign.channel == nil && (!campaign.devicesGiven || problems.isEmpty) {
            problems.append(PayloadError(.noDevices, at: .root.appending("devices"), "missing: at least one device token"))
        }
        // Without its template the body cannot be built, so per-device checks would only add noise.
        if templateMissing { return .failure(CampaignRejection(problems: problems)) }

        // Render the constant parts of the body once.
        var b = LayoutBuilder(campaignVariables: campaign.variables)
        b.beginObject()
        switch pushType {
        case .mdm:
            // Apple: the PushMagic as the value of the mdm key, and nothing else.
            b.text("mdm", campaign.mdm)
        default:
            b.key("aps")
            b.beginObject()
            if pushType == .widgets || pushType == .controls {
                b.value("content-changed", .bool(true))
            } else if pushType == .liveactivity, let activity = liveActivity {
                LiveActivityRules.writeAPS(activity, template: template?.liveActivity, campaign: campaign, strings: strings,
                                           hasAlert: hasAlert, sound: sound, now: now, into: &b)
            } else {
                Self.writeNotificationAPS(campaign, strings: strings, inline: inline, hasAlert: hasAlert, sound: sound,
                                          contentAvailable: contentAvailable, defaults: defaults, interruptionLevel: interruptionLevel, into: &b)
            }
            b.endObject()
            if let linkBytes { b.fragment(linkBytes) } else if deviceLink != nil { b.deviceLink() }
            for member in campaign.data.members { b.value(member.key, member.value) }
        }
        b.endObject()

        var plan = CampaignPlan(campaign: campaign, pushType: pushType, topic: bundleId + pushType.topicSuffix,
                                priority: priority, link: link, template: template, layout: b.finish(), deviceLink: deviceLink)
        var bodies = PlannedBodies(shared: [], own: [:], failure: nil)

        // Every device's variables, link and body, so each problem is found now.
        var required = Self.requiredVariables(strings, link: deviceLink?.pattern, mdm: pushType == .mdm ? campaign.mdm : nil)
        if pushType == .liveactivity, let activity = liveActivity, let content = template?.liveActivity {
            for name in LiveActivityRules.templateValues(activity, content).flatMap(\.variableNames) where !required.contains(name) {
                required.append(name)
            }
        }
        var deviceProblems: [PayloadError] = []
        for (position, (i, device)) in zip(campaign.deviceIndices, campaign.devices).enumerated() {
            // A channel has no per-device values: what is missing, the campaign must give.
            let path = campaign.channel != nil ? JSONPath.root.appending("variables") : JSONPath.root.appending("devices").appending(index: i)
            let missing = required.filter { name in device.variable(name) == nil && campaign.variables.value(named: name) == nil }
            for name in missing { deviceProblems.append(Self.missingVariable(name, at: path)) }
            guard missing.isEmpty else { continue }
            // Rendering the body also resolves the device's link, so a rejected link shows here.
            // Kept: this is the only time the body is rendered (intake stores these).
            do throws(PayloadError) {
                let body = try plan.body(for: device, at: path).bytes
                if position == 0 {
                    bodies.shared = body
                } else if body != bodies.shared {
                    bodies.own[position] = body
                }
            } catch {
                deviceProblems.append(error)
            }
        }
        if campaign.devices.isEmpty {
            do throws(PayloadError) {
                bodies.shared = try plan.body(for: Device(token: ""), at: CampaignPlan.devicesPath).bytes
            } catch {
                bodies.failure = error
            }
        }
        plan.bodies = bodies
        problems += Self.mergingSharedMissingVariables(deviceProblems, deviceCount: campaign.devices.count)
        guard problems.isEmpty else { return .failure(CampaignRejection(problems: problems)) }
        return .success(plan)
    }

    /// Apple's broadcast rules: channels carry Live Activity pushes only, and a broadcast
    /// updates or ends the activities subscribed to the channel (an activity is started
    /// through its push-to-start token, with `input_push_channel` to subscribe it). The
    /// broadcast request has no `apns-collapse-id`.
    static func channelProblems(_ campaign: Campaign, pushType: PushType, activity: LiveActivity?, templatePath: JSONPath) -> [PayloadError] {
        var problems: [PayloadError] = []
        if pushType != .liveactivity {
            problems.append(PayloadError(.channelRequiresLiveActivity, at: campaign.pushType != nil ? .root.appending("push_type") : templatePath,
                                         "a broadcast channel carries Live Activity pushes only (push_type \"liveactivity\"), not \"\(pushType.rawValue)\""))
        }
        if campaign.collapseId != nil {
            problems.append(PayloadError(.channelForbidsMember, at: .root.appending("collapse_id"),
                                         "a broadcast request has no apns-collapse-id"))
        }
        if activity?.event == .start {
            problems.append(PayloadError(.channelForbidsMember, at: .root.appending("live_activity").appending("event"),
                                         "a broadcast updates or ends the activities subscribed to the channel; start one with its push-to-start token (and input_push_channel to subscribe it)"))
        }
        return problems
    }

    /// The `aps` members of every push type but `liveactivity` (the caller has opened `aps`).
    static func writeNotificationAPS(_ campaign: Campaign, strings: Template.Strings, inline: InlineAlert?, hasAlert: Bool,
                                     sound: Sound?, contentAvailable: Bool, defaults: Template.Defaults,
                                     interruptionLevel: InterruptionLevel?, into b: inout LayoutBuilder) {
        if hasAlert {
            b.key("alert")
            b.beginObject()
            b.text("title", strings.title)
            b.text("subtitle", strings.subtitle)
            b.text("body", strings.body, isBody: true)
            if let a = inline {
                b.string("title-loc-key", a.titleLocKey)
                b.stringArray("title-loc-args", a.titleLocArgs)
                b.string("subtitle-loc-key", a.subtitleLocKey)
                b.stringArray("subtitle-loc-args", a.subtitleLocArgs)
                b.string("loc-key", a.locKey)
                b.stringArray("loc-args", a.locArgs)
                b.string("launch-image", a.launchImage)
            }
            b.endObject()
        }
        b.number("badge", campaign.badge.map(String.init))
        switch sound {
        case .named(let name)?:
            b.string("sound", name)
        case .critical(let critical, let name, let volume)?:
            b.key("sound")
            b.beginObject()
            b.number("critical", critical ? "1" : "0")
            b.string("name", name)
            b.number("volume", volume)
            b.endObject()
        case nil:
            break
        }
        b.string("thread-id", campaign.threadId ?? defaults.threadId)
        b.string("category", campaign.category ?? defaults.category)
        if contentAvailable { b.number("content-available", "1") }
        if campaign.mutableContent == true { b.number("mutable-content", "1") }
        b.string("target-content-id", campaign.targetContentId)
        b.string("interruption-level", interruptionLevel?.rawValue)
        b.number("relevance-score", campaign.relevanceScore)
    }

    /// Apple: priority 1 puts the device's power "over all other factors for delivery"
    /// and does not wake the device, which a time-sensitive or critical notification
    /// exists to do (it lights up the screen at once).
    static func priorityOneProblems(_ campaign: Campaign, sound: Sound?, interruptionLevel: InterruptionLevel?,
                                    soundPath: JSONPath, levelPath: JSONPath) -> [PayloadError] {
        var problems: [PayloadError] = []
        let at = campaign.priority != nil ? JSONPath.root.appending("priority") : levelPath
        if let level = interruptionLevel, level == .timeSensitive || level == .critical {
            problems.append(PayloadError(.priorityOneCannotInterrupt, at: at,
                                         "priority 1 never wakes the device, but interruption level \(level.rawValue) is presented at once: use priority 10 (or 5)"))
        }
        if case .critical(true, _, _)? = sound {
            problems.append(PayloadError(.priorityOneCannotInterrupt, at: campaign.priority != nil ? at : soundPath,
                                         "priority 1 never wakes the device, but a critical alert sound plays at once: use priority 10"))
        }
        return problems
    }

    static func missingVariable(_ name: String, at path: JSONPath) -> PayloadError {
        PayloadError(.missingVariable, at: path, "missing variable \(TextSafety.quoted(name))")
    }

    /// Every placeholder the chosen texts and the link pattern use, in order of first use.
    static func requiredVariables(_ strings: Template.Strings, link: LinkPattern?, mdm: TemplateText? = nil) -> [String] {
        var names: [String] = []
        for text in [strings.title, strings.subtitle, strings.body, link?.text, mdm].compactMap({ $0 }) {
            for name in text.variableNames where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// A variable that no device and not the campaign gives is one problem at
    /// `variables`, not one per device.
    static func mergingSharedMissingVariables(_ problems: [PayloadError], deviceCount: Int) -> [PayloadError] {
        guard deviceCount > 1 else { return problems }
        var counts: [String: Int] = [:]
        for p in problems where p.code == .missingVariable { counts[p.message, default: 0] += 1 }
        var reported: Set<String> = []
        var out: [PayloadError] = []
        for p in problems {
            if p.code == .missingVariable, counts[p.message] == deviceCount {
                if reported.insert(p.message).inserted {
                    out.append(PayloadError(.missingVariable, at: .root.appending("variables"),
                                            p.message + " (neither the campaign nor any device gives it)"))
                }
            } else {
                out.append(p)
            }
        }
        return out
    }
}

/// How a sender proves itself to APNs.
public enum ProviderAuthentication: Sendable {
    /// A JWT signed with a `.p8` key (pushgate's only kind).
    case token
    /// A TLS client certificate (the MDM push certificate for `mdm`).
    case certificate
}
