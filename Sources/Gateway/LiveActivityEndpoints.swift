import HTTPServer
import Outbox
import Payloads
import Storage
import StrictJSON
import Timing

extension DiagnosticCode {
    /// No live update token is registered for the activity (or every one is dead).
    public static let unknownActivity = DiagnosticCode(rawValue: "unknownActivity")
    /// The activity has `storage.liveActivityTokensPerActivity` update tokens already.
    public static let activityTokenLimit = DiagnosticCode(rawValue: "activityTokenLimit")
    /// The app has `storage.liveActivityTokensPerApp` Live Activity tokens already.
    public static let appTokenLimit = DiagnosticCode(rawValue: "appTokenLimit")
    /// The top-level code of a token the registry refused for one of its limits.
    public static let registryFull = DiagnosticCode(rawValue: "registryFull")
}

extension DiagnosticDomain {
    /// The Live Activity token registry.
    public static let liveActivity = DiagnosticDomain("liveActivity", [.unknownActivity, .activityTokenLimit, .appTokenLimit])
}

extension Problem {
    /// 422: a new token for an activity (or app) that has as many as the registry keeps.
    static func registryFull(_ registration: LiveActivityRegistration, app: String, activity: String) -> Problem {
        let diagnostic: Diagnostic
        switch registration {
        case .activityFull(let limit):
            diagnostic = Diagnostic(.activityTokenLimit, at: .pointer(JSONPath.root.appending("activity_id")),
                                    "activity \(JSONWriter.quoted(activity)) of app \(JSONWriter.quoted(app)) has \(limit) update tokens, as many as one activity may have (storage.liveActivityTokensPerActivity); name the outdated token in replaces, or wait for the retention (storage.liveActivityTokenRetentionHours)")
        default:
            let limit = if case .appFull(let limit) = registration { limit } else { 0 }
            diagnostic = Diagnostic(.appTokenLimit, at: .pointer(JSONPath.root.appending("token")),
                                    "app \(JSONWriter.quoted(app)) has \(limit) Live Activity tokens, as many as one app may have (storage.liveActivityTokensPerApp); name the outdated token in replaces, or wait for the retention (storage.liveActivityTokenRetentionHours)")
        }
        return Problem(status: 422, code: .registryFull, title: "Unprocessable Content", detail: diagnostic.message, errors: [diagnostic])
    }
}

/// The Live Activity token registry: `POST /v1/live-activities/tokens` (the app reports a
/// push-to-start token, or an activity's update token), and
/// `POST /v1/live-activities/{activity}/update|end`, a campaign to every live update token
/// the activity has, through the outbox like any other.
enum LiveActivityEndpoints {
    static let tokenKeys = ["app", "kind", "token", "activity_id", "replaces"]
    /// What a send by activity takes: content inline, sent at once in the app's
    /// environment (templates and schedules are `POST /v1/campaigns`').
    static let sendKeys = ["app", "alert", "sound", "priority", "expiration", "collapse_id", "dry_run", "lane", "rate_per_second", "live_activity",
                           "confirm_devices"]
    static let contentKeys: [LiveActivity.Event: [String]] = [
        .update: ["event", "content_state", "timestamp", "stale_date", "relevance_score"],
        .end: ["event", "content_state", "timestamp", "dismissal_date", "relevance_score"],
    ]

    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, configuredIsDryRun: Bool, sendGuard: SendGuard,
                         campaigns: DurableCampaigns, metrics: Metrics, clock: any TimeSource) {
        builder.add("POST", "/v1/live-activities/tokens", operation: "liveActivities.tokens") { request, parameters throws(Problem) in
            try registerToken(request, parameters, apps: apps, storage: campaigns.storage, limits: campaigns.liveActivityLimits, clock: clock)
        }
        for event in [LiveActivity.Event.update, .end] {
            builder.add("POST", "/v1/live-activities/{activity}/\(event.rawValue)", operation: "liveActivities.\(event.rawValue)") { request, parameters throws(Problem) in
                try send(event, request, parameters, apps: apps, configuredIsDryRun: configuredIsDryRun, sendGuard: sendGuard,
                         campaigns: campaigns, metrics: metrics)
            }
        }
    }

    /// ActivityKit's `Activity.id` (a UUID string), or any id of the same alphabet.
    static func isActivityID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, bytes.count <= 128 else { return false }
        func ok(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        return ok(first) && bytes.allSatisfy { ok($0) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }
    }

    static func registerToken(_ request: HTTPRequest, _ parameters: PathParameters, apps: AppDirectory,
                              storage: any CampaignStorage, limits: LiveActivityLimits, clock: any TimeSource) throws(Problem) -> HTTPResponse {
        let json = try JSONBody.decode(request)
        guard case .object(let object) = json else {
            throw .validation([Diagnostic(.wrongType, at: .pointer(.root), "expected an object with kind, token and activity_id")])
        }
        var errors: [Diagnostic] = []
        let root = JSONPath.root
        for key in object.keys where !tokenKeys.contains(key) {
            errors.append(Diagnostic(.unknownKey, at: .pointer(root.appending(key)), "unknown member; expected \(tokenKeys.joined(separator: ", "))"))
        }
        var kind: LiveActivityToken.Kind?
        switch object["kind"] {
        case .string(let name)?:
            kind = LiveActivityToken.Kind(name: name)
            if kind == nil { errors.append(Diagnostic(.invalidValue, at: .pointer(root.appending("kind")), "expected \"push-to-start\" or \"update\"")) }
        case nil: errors.append(Diagnostic(.missing, at: .pointer(root.appending("kind")), "missing: \"push-to-start\" or \"update\""))
        case let other?: errors.append(Diagnostic(.wrongType, at: .pointer(root.appending("kind")), "expected a string, found \(other.kindDescription)"))
        }
        /// A hex token at `key` (normalized), or nil with its problem noted.
        func hexToken(_ key: String, missing: String?) -> String? {
            switch object[key] {
            case .string(let text)?:
                switch DeviceToken.normalize(text) {
                case .success(let normalized): return normalized
                case .failure(let problem):
                    errors.append(Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .pointer(root.appending(key)), problem.message))
                }
            case nil:
                if let missing { errors.append(Diagnostic(.missing, at: .pointer(root.appending(key)), missing)) }
            case let other?: errors.append(Diagnostic(.wrongType, at: .pointer(root.appending(key)), "expected a string, found \(other.kindDescription)"))
            }
            return nil
        }
        let token = hexToken("token", missing: "missing: the token ActivityKit gave (hex)")
        // The token this one replaces (ActivityKit gave a new one): Apple asks the server
        // to invalidate the outdated token, and only the app knows which one it was.
        let replaces = hexToken("replaces", missing: nil)
        if let token, token == replaces {
            errors.append(Diagnostic(.conflictingFields, at: .pointer(root.appending("replaces")),
                                     "replaces names the outdated token ActivityKit replaced; it is the token itself"))
        }
        var activity = ""
        switch object["activity_id"] {
        case .string(let text)?:
            if isActivityID(text) { activity = text } else {
                errors.append(Diagnostic(.invalidValue, at: .pointer(root.appending("activity_id")),
                                         "expected the activity's id (letters, digits, '-', '.', '_', at most 128), not \(JSONWriter.quoted(TextSafety.excerpt(text)))"))
            }
        case nil:
            if kind == .update { errors.append(Diagnostic(.missing, at: .pointer(root.appending("activity_id")), "missing: an update token belongs to one activity (Activity.id)")) }
        case let other?: errors.append(Diagnostic(.wrongType, at: .pointer(root.appending("activity_id")), "expected a string, found \(other.kindDescription)"))
        }
        if kind == .pushToStart, object["activity_id"] != nil {
            errors.append(Diagnostic(.conflictingFields, at: .pointer(root.appending("activity_id")),
                                     "a push-to-start token belongs to the app, not to an activity"))
        }
        if case let value? = object["app"], value.stringValue == nil {
            errors.append(Diagnostic(.wrongType, at: .pointer(root.appending("app")), "expected the app's name (a string)"))
        }
        guard errors.isEmpty, let kind, let token else { throw .validation(errors) }
        let app = try apps.campaignApp(json, for: parameters.caller)
        parameters.notes.app = app.name
        let time = clock.millisecondsSince1970()
        // The replaced token is not counted against the caps, and is forgotten only once
        // the new one is kept: a refused report loses nothing.
        let registration = try fromStorage(storage.registerLiveActivityToken(LiveActivityToken(app: app.name, token: token, kind: kind, activity: activity),
                                                                             atMilliseconds: time, limits: limits, replacing: replaces))
        guard case .registered(let dead) = registration else {
            throw .registryFull(registration, app: app.name, activity: activity)
        }
        var replaced = false
        if let replaces, replaces != token { replaced = try fromStorage(storage.forgetLiveActivityToken(app: app.name, token: replaces)) }
        var w = JSONWriter()
        w.object { w in
            w.member("app", app.name)
            w.member("kind", kind.name)
            w.member("token", token)
            w.member("activity_id", orNull: kind == .update ? activity : nil)
            w.member("registered_at_ms", time)
            w.member("was_dead", dead != nil)
            w.member("replaced", replaced)
        }
        w.raw("\n")
        return jsonResponse(status: 201, w.bytes)
    }

    /// The body is a campaign without `devices`: its `live_activity` (optional) says the
    /// rest of the content, the path the event; the devices are the activity's tokens.
    static func send(_ event: LiveActivity.Event, _ request: HTTPRequest, _ parameters: PathParameters, apps: AppDirectory,
                     configuredIsDryRun: Bool, sendGuard: SendGuard, campaigns: DurableCampaigns, metrics: Metrics) throws(Problem) -> HTTPResponse {
        let activity = parameters["activity"] ?? ""
        guard isActivityID(activity) else {
            throw .validation([Diagnostic(.invalidValue, at: .parameter("activity"),
                                          "expected the activity's id (letters, digits, '-', '.', '_', at most 128)")])
        }
        let json = try JSONBody.decode(request)
        guard case .object(var campaign) = json else {
            throw .validation([Diagnostic(.wrongType, at: .pointer(.root), "expected a campaign object (without devices)")])
        }
        var errors: [Diagnostic] = []
        if campaign["devices"] != nil {
            errors.append(Diagnostic(.invalidValue, at: .pointer(JSONPath.root.appending("devices")),
                                     "the devices are the activity's registered update tokens; leave devices out"))
        }
        for key in campaign.keys where key != "devices" && !sendKeys.contains(key) {
            errors.append(Diagnostic(.unknownKey, at: .pointer(JSONPath.root.appending(key)),
                                     "not taken here (expected \(sendKeys.joined(separator: ", "))); templates and schedules go through POST /v1/campaigns"))
        }
        if case .object(let alert)? = campaign["alert"] {
            for key in alert.keys where key != "title" && key != "body" {
                errors.append(Diagnostic(.unknownKey, at: .pointer(JSONPath.root.appending("alert").appending(key)), "a Live Activity alert has a title and a body"))
            }
        }
        var content = JSONObject()
        switch campaign["live_activity"] {
        case .object(let given)?: content = given
        case nil: break
        case let other?:
            errors.append(Diagnostic(.wrongType, at: .pointer(JSONPath.root.appending("live_activity")), "expected an object, found \(other.kindDescription)"))
        }
        for key in content.keys where !(contentKeys[event] ?? []).contains(key) {
            errors.append(Diagnostic(.unknownKey, at: .pointer(JSONPath.root.appending("live_activity").appending(key)),
                                     "an \(event.rawValue) takes \((contentKeys[event] ?? []).joined(separator: ", "))"))
        }
        if let given = content["event"], given != .string(event.rawValue) {
            errors.append(Diagnostic(.conflictingFields, at: .pointer(JSONPath.root.appending("live_activity").appending("event")),
                                     "the path says \(event.rawValue); leave event out or say \(JSONWriter.quoted(event.rawValue))"))
        }
        guard errors.isEmpty else { throw .validation(errors) }
        let app = try apps.campaignApp(json, for: parameters.caller)
        parameters.notes.app = app.name
        let tokens = try fromStorage(campaigns.storage.liveActivityTokens(app: app.name, activity: activity))
        guard !tokens.isEmpty else {
            let message = "no live update token is registered for activity \(JSONWriter.quoted(activity)) of app \(JSONWriter.quoted(app.name)) (POST /v1/live-activities/tokens), or APNs called every one dead"
            throw Problem(status: 404, code: .notFound, title: "Not Found", detail: message,
                          errors: [Diagnostic(.unknownActivity, at: .parameter("activity"), message)])
        }
        content.members.removeAll { $0.key == "event" }
        content.members.insert(JSONMember(key: "event", value: .string(event.rawValue)), at: 0)
        campaign.members.removeAll { $0.key == "live_activity" }
        campaign.members.append(JSONMember(key: "live_activity", value: .object(content)))
        campaign.members.append(JSONMember(key: "devices", value: .array(tokens.map(JSON.string))))
        // The same checks as POST /v1/campaigns: an activity's tokens are its devices.
        let plan = try CampaignEndpoints.checkedPlan(.object(campaign), app: app, sendGuard: sendGuard, campaigns: campaigns, metrics: metrics)
        return try CampaignEndpoints.answer(
            try fromStorage(campaigns.accept(plan, tokens: TokenFeed(plan.devices.lazy.map(\.token)), dryRun: plan.campaign.dryRun || configuredIsDryRun,
                                             idempotency: nil, rejectDuplicateTokens: false, app: app.name,
                                             environment: app.environment(of: plan).rawValue, owner: parameters.caller.owner)),
            key: nil)
    }
}
