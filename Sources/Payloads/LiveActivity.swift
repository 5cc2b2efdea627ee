import DeepLinks
import StrictJSON

/// A campaign's `live_activity` member: what an ActivityKit push notification starts,
/// updates or ends (Apple, "Starting and updating Live Activities with ActivityKit push
/// notifications"). Dates are UNIX seconds; numbers are kept as written.
public struct LiveActivity: Sendable, Equatable {
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    public var event: Event
    /// `content-state`: the app's `Activity.ContentState`, as the app decodes it.
    public var contentState: JSONObject?
    /// When the content was made; nil: when the campaign is sent (its `send_at`, else now).
    public var timestamp: Int64?
    public var staleDate: Int64?
    /// `end` only: when the system removes the ended activity (in the past: at once).
    public var dismissalDate: Int64?
    /// Relative order among the app's activities (Apple uses 100 and 50), as written.
    public var relevanceScore: String?
    /// `start` only: the app's `ActivityAttributes` type and its static values.
    public var attributesType: String?
    public var attributes: JSONObject?
    /// `start` only (iOS 18): ask for an update token for the new activity…
    public var inputPushToken = false
    /// …or subscribe it to a broadcast channel (the channel id, base64).
    public var inputPushChannel: String?

    public init(event: Event) {
        self.event = event
    }

    /// Apple keeps an ended Live Activity on the Lock Screen for at most four hours.
    public static let maxDismissalSeconds: Int64 = 4 * 3600

    static let keys = ["event", "content_state", "timestamp", "stale_date", "dismissal_date", "relevance_score",
                       "attributes_type", "attributes", "input_push_token", "input_push_channel"]

    /// The member's name in the campaign next to its name in `aps`.
    static let apsNames: [String: String] = [
        "content_state": "content-state", "stale_date": "stale-date", "dismissal_date": "dismissal-date",
        "attributes_type": "attributes-type", "attributes": "attributes", "input_push_token": "input-push-token",
        "input_push_channel": "input-push-channel",
    ]

    /// Reads `live_activity`; every problem goes to `r`. nil when it cannot be read well
    /// enough to check (no valid `event`).
    static func read(_ value: JSON, _ r: inout ConfigReader) -> LiveActivity? {
        let path = JSONPath.root.appending("live_activity")
        guard case .object(let object) = value else {
            r.wrongType(value, at: path, expected: "an object with the Live Activity's event and content")
            return nil
        }
        r.rejectUnknownKeys(object, at: path, keys: keys)
        var event: Event?
        if let text = r.string(object, "event", at: path)?.value {
            event = Event(rawValue: text)
            if event == nil {
                r.problem(.invalidValue, at: path.appending("event"), "expected \"start\", \"update\" or \"end\", not \(ConfigReader.shown(.string(text)))")
            }
        } else if object["event"] == nil {
            r.problem(.missing, at: path.appending("event"), "missing: the event, \"start\", \"update\" or \"end\"")
        }
        var activity = LiveActivity(event: event ?? .update)
        activity.contentState = r.object(object, "content_state", at: path)
        if let state = activity.contentState { NumberSafety.check(.object(state), at: path.appending("content_state"), reader: &r) }
        activity.timestamp = date(object, "timestamp", at: path, &r)
        activity.staleDate = date(object, "stale_date", at: path, &r)
        activity.dismissalDate = date(object, "dismissal_date", at: path, &r)
        if let value = object["relevance_score"] {
            let here = path.appending("relevance_score")
            if case .number(let text) = value, let d = Double(text), d >= 0 {
                if let why = NumberSafety.problem(text) { r.problem(.unsafeNumber, at: here, why) } else { activity.relevanceScore = text }
            } else if case .number = value {
                r.problem(.invalidValue, at: here, "expected a number ≥ 0 (higher comes first; Apple uses 100 and 50), found \(ConfigReader.shown(value))")
            } else {
                r.wrongType(value, at: here, expected: "a number ≥ 0")
            }
        }
        if let type = r.plainString(object, "attributes_type", at: path) {
            if isSwiftTypeName(type) { activity.attributesType = type } else {
                r.problem(.invalidValue, at: path.appending("attributes_type"), "expected the name of the app's ActivityAttributes type (a Swift identifier, at most 256 bytes), not \(TextSafety.quoted(type))")
            }
        }
        activity.attributes = r.object(object, "attributes", at: path)
        if let attributes = activity.attributes { NumberSafety.check(.object(attributes), at: path.appending("attributes"), reader: &r) }
        if let value = object["input_push_token"] {
            switch value {
            case .bool(true), .number("1"): activity.inputPushToken = true
            case .bool(false), .number("0"): break
            default: r.problem(.invalidValue, at: path.appending("input_push_token"), "expected true (or 1) to ask for an update token, found \(ConfigReader.shown(value))")
            }
        }
        if let channel = r.plainString(object, "input_push_channel", at: path) {
            if isBase64(channel) { activity.inputPushChannel = channel } else {
                r.problem(.invalidValue, at: path.appending("input_push_channel"), "expected a broadcast channel id as APNs gives it (base64, like \"dHN0LXNyY2gtY2hubA==\"), not \(TextSafety.quoted(channel))")
            }
        }
        return event == nil ? nil : activity
    }

    /// UNIX seconds (a whole number ≥ 0) or an RFC 3339 time.
    static func date(_ object: JSONObject, _ key: String, at section: JSONPath, _ r: inout ConfigReader) -> Int64? {
        guard let value = object[key] else { return nil }
        let path = section.appending(key)
        switch value {
        case .number:
            if let n = value.int64Value, n >= 0 { return n }
            r.problem(.invalidValue, at: path, "expected UNIX seconds (a whole number ≥ 0) or an RFC 3339 time, found \(ConfigReader.shown(value))")
        case .string(let text):
            switch Expiration.parseRFC3339(text) {
            case .success(let n) where n >= 0: return n
            case .success: r.problem(.invalidValue, at: path, "is before 1970")
            case .failure(let why): r.problem(.invalidValue, at: path, why.message)
            }
        default:
            r.wrongType(value, at: path, expected: "UNIX seconds or an RFC 3339 time")
        }
        return nil
    }

    static func isSwiftTypeName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, bytes.count <= 256 else { return false }
        func letter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F }
        return letter(first) && bytes.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    /// Standard base64 with its padding, as APNs writes channel ids.
    static func isBase64(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0, bytes.count <= 1024 else { return false }
        let padding = bytes.reversed().prefix { $0 == 0x3D }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2F
        }
    }
}

/// Apple's rules for ActivityKit push notifications that join several members, checked
/// before anything is sent: which members each event needs or forbids, the priorities
/// Apple allows, members an ActivityKit payload has no place for, and dates in order.
enum LiveActivityRules {
    static let path = JSONPath.root.appending("live_activity")

    /// Campaign members that an ActivityKit payload has no place for.
    static let foreignMembers: [(key: String, given: @Sendable (Campaign) -> Bool, instead: String)] = [
        ("badge", { $0.badge != nil }, "a Live Activity has no badge"),
        ("category", { $0.category != nil }, "a Live Activity has no notification category"),
        ("thread_id", { $0.threadId != nil }, "a Live Activity is not grouped in a thread"),
        ("content_available", { $0.contentAvailable == true }, "an ActivityKit push wakes the widget extension by itself"),
        ("mutable_content", { $0.mutableContent == true }, "a notification service extension does not see ActivityKit pushes"),
        ("target_content_id", { $0.targetContentId != nil }, "a Live Activity has no target content id"),
        ("interruption_level", { $0.interruptionLevel != nil }, "a Live Activity alert has no interruption level"),
        ("relevance_score", { $0.relevanceScore != nil }, "use live_activity.relevance_score (any number ≥ 0) to order Live Activities"),
    ]

    /// `reported`: the problems found so far; a member already reported as unreadable is
    /// not reported missing as well.
    static func problems(_ campaign: Campaign, activity: LiveActivity, template: TemplateLiveActivity?, priority: Int?, hasTitle: Bool, hasBody: Bool,
                         alertPath: JSONPath, now: Int64, reported: [PayloadError]) -> [PayloadError] {
        let hasAlert = hasTitle || hasBody
        var problems: [PayloadError] = []
        func requires(_ key: String, _ present: Bool, _ why: String) {
            guard !present, !reported.contains(where: { $0.path == path.appending(key) }) else { return }
            problems.append(PayloadError(.liveActivityRequiresMember, at: path.appending(key),
                                         "missing: a Live Activity \(activity.event.rawValue) needs \(key) (\(why))"))
        }
        func forbids(_ key: String, _ present: Bool, _ why: String) {
            guard present else { return }
            problems.append(PayloadError(.liveActivityForbidsMember, at: path.appending(key),
                                         "a Live Activity \(activity.event.rawValue) has no \(key): \(why)"))
        }
        if let priority, priority != 10 && priority != 5 {
            problems.append(PayloadError(.liveActivityPriority, at: .root.appending("priority"),
                                         "APNs takes Live Activity pushes at priority 10 (now, counted against the hourly budget) or 5 (not counted), found \(priority)"))
        }
        for member in foreignMembers where member.given(campaign) {
            problems.append(PayloadError(.liveActivityForbidsMember, at: .root.appending(member.key),
                                         "\(member.key) does not go in an ActivityKit push: \(member.instead)"))
        }
        if case .critical? = campaign.sound {
            problems.append(PayloadError(.liveActivityForbidsMember, at: .root.appending("sound"),
                                         "a Live Activity alert plays a named sound (or \"default\"), not a critical one"))
        }
        if case .inline(let alert) = campaign.message {
            let alertRoot = JSONPath.root.appending("alert")
            for (key, given) in [("subtitle", alert.subtitle != nil), ("subtitle-loc-key", alert.subtitleLocKey != nil),
                                 ("launch-image", alert.launchImage != nil)] where given {
                problems.append(PayloadError(.liveActivityForbidsMember, at: alertRoot.appending(key),
                                             "a Live Activity alert has a title, a body and a sound only"))
            }
            for (key, text, loc) in [("title", alert.title, alert.titleLocKey), ("body", alert.body, alert.locKey)] where text != nil && loc != nil {
                problems.append(PayloadError(.conflictingFields, at: alertRoot.appending(key),
                                             "give the \(key) as text or as a loc-key, not both"))
            }
            // ActivityKit's AlertConfiguration shows one short line: plain text (OpenAPI's PlainText).
            for (key, text) in [("title", alert.title), ("body", alert.body)] {
                if let text, let why = ConfigReader.plainTextProblem(text) {
                    problems.append(PayloadError(.invalidValue, at: alertRoot.appending(key), "a Live Activity alert's \(key) is plain text: it \(why)"))
                }
            }
        }
        if hasAlert && (!hasTitle || !hasBody) {
            problems.append(PayloadError(.liveActivityRequiresMember, at: alertPath,
                                         "missing: a Live Activity alert has both a title and a body (ActivityKit's AlertConfiguration), this one lacks its \(hasTitle ? "body" : "title")"))
        } else if !hasAlert, campaign.sound != nil {
            problems.append(PayloadError(.liveActivityRequiresMember, at: .root.appending("alert"),
                                         "missing: a Live Activity plays its sound with an alert (a title and a body)"))
        }
        let start = activity.event == .start
        switch activity.event {
        case .start:
            requires("content_state", activity.contentState != nil || template != nil, "the activity's first content")
            requires("attributes_type", activity.attributesType != nil || template?.attributesType != nil, "the name of the app's ActivityAttributes type")
            requires("attributes", activity.attributes != nil || template?.attributes != nil, "the activity's static attributes")
            if !hasAlert {
                problems.append(PayloadError(.liveActivityRequiresMember, at: .root.appending("alert"),
                                             "missing: a Live Activity start needs an alert (Apple: so that starting it does not surprise the person)"))
            }
            if activity.inputPushToken && activity.inputPushChannel != nil {
                problems.append(PayloadError(.conflictingFields, at: path.appending("input_push_channel"),
                                             "a started activity gets updates either by token (input_push_token) or on a channel (input_push_channel), not both"))
            }
        case .update:
            requires("content_state", activity.contentState != nil || template != nil, "the content it shows from now on")
        case .end:
            forbids("stale_date", activity.staleDate != nil, "an ended activity does not go stale; dismissal_date says when it goes")
        }
        forbids("dismissal_date", activity.event != .end && activity.dismissalDate != nil, "only an end says when the activity is dismissed")
        for key in ["attributes_type", "attributes", "input_push_token", "input_push_channel"] where !start {
            let given = switch key {
            case "attributes_type": activity.attributesType != nil
            case "attributes": activity.attributes != nil
            case "input_push_token": activity.inputPushToken
            default: activity.inputPushChannel != nil
            }
            forbids(key, given, "only a start (a push-to-start token) carries it")
        }
        let timestamp = activity.timestamp ?? campaign.sendAt ?? now
        if let stale = activity.staleDate, stale <= timestamp {
            problems.append(PayloadError(.liveActivityDateOrder, at: path.appending("stale_date"),
                                         "stale_date (\(stale)) must be after the content's timestamp (\(timestamp)): the activity would be stale at once"))
        }
        if let dismissal = activity.dismissalDate, dismissal > timestamp + LiveActivity.maxDismissalSeconds {
            problems.append(PayloadError(.liveActivityDateOrder, at: path.appending("dismissal_date"),
                                         "dismissal_date (\(dismissal)) is more than four hours after the timestamp (\(timestamp)); Apple removes an ended Live Activity within four hours (a date in the past dismisses it at once)"))
        }
        return problems
    }

    /// The template's values the push uses: what the campaign's `live_activity` does not
    /// give itself (the content state; for a start, the attributes).
    static func templateValues(_ activity: LiveActivity, _ template: TemplateLiveActivity) -> [TemplateLiveActivity.Value] {
        var values: [TemplateLiveActivity.Value] = []
        if activity.event != .end, activity.contentState == nil { values.append(template.contentState) }
        if activity.event == .start, activity.attributes == nil, let attributes = template.attributes { values.append(attributes) }
        return values
    }

    /// Writes the `aps` members of an ActivityKit push (the caller has opened `aps`).
    /// What the campaign leaves out comes from its template's `live_activity`.
    static func writeAPS(_ activity: LiveActivity, template: TemplateLiveActivity?, campaign: Campaign, strings: Template.Strings,
                         hasAlert: Bool, sound: Sound?, now: Int64, into b: inout LayoutBuilder) {
        let start = activity.event == .start
        b.number("timestamp", String(activity.timestamp ?? campaign.sendAt ?? now))
        b.string("event", activity.event.rawValue)
        if let state = activity.contentState {
            b.value("content-state", .object(state))
        } else if let state = template?.contentState, activity.event != .end {
            b.templated("content-state", state)
        }
        b.number("stale-date", activity.staleDate.map(String.init))
        b.number("dismissal-date", activity.dismissalDate.map(String.init))
        b.number("relevance-score", activity.relevanceScore)
        b.string("attributes-type", activity.attributesType ?? (start ? template?.attributesType : nil))
        if let attributes = activity.attributes {
            b.value("attributes", .object(attributes))
        } else if start, let attributes = template?.attributes {
            b.templated("attributes", attributes)
        }
        if activity.inputPushToken { b.number("input-push-token", "1") }
        b.string("input-push-channel", activity.inputPushChannel)
        guard hasAlert else { return }
        b.key("alert")
        b.beginObject()
        var inline: InlineAlert?
        if case .inline(let alert) = campaign.message { inline = alert }
        if let key = inline?.titleLocKey { locText(&b, "title", key, inline?.titleLocArgs) } else { b.text("title", strings.title) }
        if let key = inline?.locKey { locText(&b, "body", key, inline?.locArgs) } else { b.text("body", strings.body, isBody: true) }
        if case .named(let name)? = sound { b.string("sound", name) }
        b.endObject()
    }

    /// `"title": {"loc-key": …, "loc-args": […]}`, the localized form of Apple's example.
    private static func locText(_ b: inout LayoutBuilder, _ key: String, _ locKey: String, _ args: [String]?) {
        b.key(key)
        b.beginObject()
        b.string("loc-key", locKey)
        b.stringArray("loc-args", args)
        b.endObject()
    }
}
