import APNs
import HTTPServer
import Outbox
import Payloads
import Storage
import StrictJSON
import Crypto

/// `POST /v1/campaigns` (202 once the campaign and every device row are committed),
/// `GET /v1/campaigns` and `GET /v1/campaigns/{id}`.
enum CampaignEndpoints {
    static let defaultPageSize = 100
    static let maxPageSize = 1000

    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, configuredIsDryRun: Bool,
                         sendGuard: SendGuard = SendGuard(), campaigns: DurableCampaigns, metrics: Metrics,
                         channels: ChannelClientLookup? = nil) {
        builder.add("POST", "/v1/campaigns", operation: "campaigns.create") { request, parameters throws(Problem) in
            try create(request, parameters, apps: apps, configuredIsDryRun: configuredIsDryRun, sendGuard: sendGuard,
                   campaigns: campaigns, metrics: metrics, channels: channels)
        }

        // A key sees the campaigns it created; an admin key (or no keys at all) sees every one.
        builder.add("GET", "/v1/campaigns", operation: "campaigns.list") { request, parameters throws(Problem) in
            let values = try QueryParameters.read(request, integers: ["limit": 1...maxPageSize, "before": 1...Int.max])
            let filter = try CampaignListFilter.read(request, limit: values["limit"] ?? defaultPageSize,
                                                     before: values["before"].map(Int64.init))
            let caller = parameters.caller
            let now = campaigns.clock.wallSeconds()
            let page = try fromStorage(filter.page(owner: caller.isAdmin ? nil : caller.owner, now: now) { limit, before, owner, app throws(StorageError) in
                try campaigns.storage.campaigns(limit: limit, before: before, owner: owner, app: app)
            })
            return jsonResponse(CampaignJSON.list(page.campaigns, next: page.next.map(filter.nextPath), now: now))
        }

        // Devices by APNs reason (failed, unregistered and retrying unless `?state=` says
        // otherwise): one pass over the campaign's rows, so it is asked for, not polled.
        builder.add("GET", "/v1/campaigns/{id}/reasons", operation: "campaigns.reasons") { request, parameters throws(Problem) in
            let id = parameters["id"] ?? ""
            let states = try stateFilter(request) ?? [.failed, .unregistered, .retrying]
            guard let summary = try fromStorage(campaigns.storage.campaign(id: id)), parameters.caller.sees(owner: summary.owner)
            else { throw .notFound(request.path) }
            return jsonResponse(CampaignJSON.reasons(id: summary.id, try fromStorage(campaigns.storage.reasonCounts(campaign: summary.seq, states: states))))
        }

        // What was sent: the message every device without a body of its own got.
        builder.add("GET", "/v1/campaigns/{id}/message", operation: "campaigns.message") { request, parameters throws(Problem) in
            let id = parameters["id"] ?? ""
            guard let summary = try fromStorage(campaigns.storage.campaign(id: id)), parameters.caller.sees(owner: summary.owner),
                  let message = try fromStorage(campaigns.storage.message(campaign: summary.seq))
            else { throw .notFound(request.path) }
            return jsonResponse(CampaignJSON.message(message))
        }

        builder.add("GET", "/v1/campaigns/{id}", operation: "campaigns.get") { request, parameters throws(Problem) in
            let id = parameters["id"] ?? ""
            let values = try QueryParameters.read(request, integers: ["page": 1...Int.max / maxPageSize, "per_page": 1...maxPageSize])
            let states = try stateFilter(request)
            let page = values["page"] ?? 1
            let size = values["per_page"] ?? defaultPageSize
            // Another key's campaign is answered as one that does not exist.
            guard let summary = try fromStorage(campaigns.storage.campaign(id: id)), parameters.caller.sees(owner: summary.owner)
            else { throw .notFound(request.path) }
            let rows = try fromStorage(campaigns.storage.results(campaign: summary.seq, states: states, offset: (page - 1) * size, limit: size))
            return jsonResponse(CampaignJSON.detail(summary, rows: rows, page: page, pageSize: size, now: campaigns.clock.wallSeconds()))
        }

        for action in LifecycleAction.allCases {
            builder.add("POST", "/v1/campaigns/{id}/\(action.rawValue)", operation: "campaigns.\(action.rawValue)") { request, parameters throws(Problem) in
                let id = parameters["id"] ?? ""
                // Another key's campaign cannot be changed (nor seen) by this one.
                guard let found = try fromStorage(campaigns.storage.campaign(id: id)), parameters.caller.sees(owner: found.owner)
                else { throw .notFound(request.path) }
                switch try fromStorage(campaigns.change(id, action)) {
                case .notFound:
                    throw .notFound(request.path)
                case .refused(let summary):
                    throw .campaignFinished(summary, action: action, now: campaigns.clock.wallSeconds())
                case .changed(let summary), .unchanged(let summary):
                    return jsonResponse(CampaignJSON.summary(summary, now: campaigns.clock.wallSeconds()))
                }
            }
        }
    }

    /// `?state=failed` or `?state=failed,unregistered`: only those devices; nil when absent.
    static func stateFilter(_ request: HTTPRequest) throws(Problem) -> Set<DeliveryState>? {
        // Given once at most (`QueryParameters`); several states comma-separated.
        guard let given = request.queryValue("state") else { return nil }
        var states = Set<DeliveryState>()
        var errors: [Diagnostic] = []
        for name in given.split(separator: ",", omittingEmptySubsequences: false) {
            if let state = DeliveryState(name: String(name)) { states.insert(state) } else {
                errors.append(Diagnostic(.invalidValue, at: .parameter("state"),
                                         "unknown state \(JSONWriter.quoted(TextSafety.excerpt(String(name)))); expected one or more (comma-separated) of: "
                                         + DeliveryState.allCases.map(\.name).joined(separator: ", ")))
            }
        }
        guard errors.isEmpty else { throw .invalidQuery(errors) }
        return states
    }

    static func create(_ request: HTTPRequest, _ parameters: PathParameters, apps: AppDirectory, configuredIsDryRun: Bool,
                       sendGuard: SendGuard = SendGuard(), campaigns: DurableCampaigns, metrics: Metrics,
                       channels: ChannelClientLookup? = nil) throws(Problem) -> HTTPResponse {
        var idempotency: (key: String, sha256: String)?
        if let key = request.header("idempotency-key") {
            guard IdempotencyKey.isValid(key) else { throw .invalidIdempotencyKey }
            idempotency = (key, SHA256.hex(request.body))
        }
        let isLines = request.header("content-type").map(DeviceLines.isNDJSON) ?? false
        let inParts = try partsFlag(request)
        if inParts {
            if isLines { throw .unsupportedMediaType(request.header("content-type")) }
            // Not the hash of the same body without ?parts=true: a key is one request.
            idempotency = idempotency.map { ($0.key, SHA256.hex(request.body + Array("\n?parts=true".utf8))) }
        }
        // The JSON form is parsed once here and planned from the parsed document.
        var json = JSON.null
        if !isLines {
            json = try JSONBody.decode(request)
        } else if let (header, _) = DeviceLines.split(request.body), let parsed = try? JSONBody.parser.parse(Array(header)) {
            json = parsed  // only to find the app; planLines reads the header again
        }
        // The campaign's app: its table, templates and topic plan it.
        let app = try apps.campaignApp(json, for: parameters.caller)
        parameters.notes.app = app.name
        // A key seen before answers without planning again: no new sends.
        if let idempotency, let record = try fromStorage(campaigns.previous(key: idempotency.key, owner: parameters.caller.owner), catching: storageProblem) {
            let replayed = try fromStorage(campaigns.replay(record, requestSHA256: idempotency.sha256), catching: storageProblem)
            if inParts { return try answerFilling(replayed, key: idempotency.key, campaigns: campaigns) }
            return try answer(replayed, key: idempotency.key)
        }
        if inParts {
            let plan = try planInParts(json, app: app, campaigns: campaigns, metrics: metrics)
            return try answerFilling(try fromStorage(campaigns.acceptFilling(plan, dryRun: plan.campaign.dryRun || configuredIsDryRun,
                                                                             idempotency: idempotency, app: app.name,
                                                                             environment: app.environment(of: plan).rawValue, owner: parameters.caller.owner),
                                                     catching: storageProblem),
                                     key: idempotency?.key, campaigns: campaigns)
        }
        if isLines {
            let (plan, lines, count) = try planLines(request.body, app: app, metrics: metrics)
            let schedule = campaigns.scheduleProblems(plan.campaign)
            if !schedule.isEmpty { throw .validation(schedule) }
            if let refusal = sendGuard.problem(devices: count, confirmed: plan.campaign.confirmDevices,
                                               at: .pointer(.root.appending("confirm_devices"))) {
                throw .confirmationRequired(refusal)
            }
            let tokens = lines.lazy.compactMap { try? $0.token.get() }
            return try answer(try fromStorage(campaigns.accept(plan, tokens: TokenFeed(tokens), dryRun: plan.campaign.dryRun || configuredIsDryRun,
                                                               idempotency: idempotency, rejectDuplicateTokens: true, app: app.name,
                                                               environment: app.environment(of: plan).rawValue, owner: parameters.caller.owner),
                                              catching: storageProblem),
                              key: idempotency?.key)
        }
        let plan = try checkedPlan(json, app: app, sendGuard: sendGuard, campaigns: campaigns, metrics: metrics)
        let dryRun = plan.campaign.dryRun || configuredIsDryRun
        let owner = parameters.caller.owner
        let accept: @Sendable () throws(Problem) -> HTTPResponse = { [idempotency] () throws(Problem) in
            try answer(try fromStorage(campaigns.accept(plan, tokens: TokenFeed(plan.devices.lazy.map(\.token)), dryRun: dryRun,
                                                        idempotency: idempotency, rejectDuplicateTokens: false, app: app.name,
                                                        environment: app.environment(of: plan).rawValue, owner: owner),
                                       catching: storageProblem),
                       key: idempotency?.key)
        }
        // A channel is read at Apple first: on the upstream pool, so the workers other
        // campaigns need never wait on Apple.
        if let channel = plan.channel, !dryRun, let client = channels?(app.name, app.environment(of: plan)) {
            return .handOff(throwing: { () throws(Problem) in
                if let finding = ChannelCheck.finding(plan, channel: channel, client: client) {
                    throw .validation([finding])
                }
                return try accept()
            }, busy: .upstreamBusy)
        }
        return try accept()
    }

    /// The problem a storage error is when a campaign is accepted: a token stored twice is
    /// the request's (422), anything else the store's (503).
    /// A campaign document's plan with its schedule and the send guard checked: what every
    /// endpoint that stores a whole campaign (campaigns, Live Activity events) checks first.
    static func checkedPlan(_ json: JSON, app: GatewayApp, sendGuard: SendGuard, campaigns: DurableCampaigns,
                            metrics: Metrics) throws(Problem) -> CampaignPlan {
        let plan: CampaignPlan
        switch app.plan(json: json) {
        case .failure(let rejection): throw CampaignProblems.problem(for: rejection, app: app.name, metrics: metrics)
        case .success(let planned): plan = planned
        }
        let schedule = campaigns.scheduleProblems(plan.campaign)
        if !schedule.isEmpty { throw .validation(schedule) }
        if let refusal = sendGuard.problem(devices: plan.devices.count, confirmed: plan.campaign.confirmDevices,
                                           at: .pointer(.root.appending("confirm_devices"))) {
            throw .confirmationRequired(refusal)
        }
        return plan
    }

    static func storageProblem(_ error: StorageError) -> Problem {
        if error.code == .duplicateToken {
            return .validation([Diagnostic(PayloadErrorCode.duplicateDevice.diagnosticCode, at: .pointer(.root.appending("devices")),
                                           error.message)])
        }
        return .storageUnavailable(error)
    }

    /// `application/x-ndjson`: the campaign (without `devices`) on the first line, then one
    /// device token per line. Every bad line is reported (up to 20), by line number.
    static func planLines(_ body: [UInt8], app: GatewayApp, metrics: Metrics) throws(Problem) -> (CampaignPlan, DeviceLines, Int) {
        guard let (header, lines) = DeviceLines.split(body) else {
            throw .validation([Diagnostic(PayloadErrorCode.noDevices.diagnosticCode, at: .line(2, file: nil),
                                          "expected the campaign on the first line, then one device token per line")])
        }
        do throws(JSONParseError) {
            _ = try JSONBody.parser.parse(Array(header))
        } catch {
            throw .malformedJSON(error)
        }
        let plan: CampaignPlan
        switch app.plan(jsonBytes: Array(header), requireDevices: false) {
        case .failure(let rejection): throw CampaignProblems.problem(for: rejection, app: app.name, metrics: metrics)
        case .success(let planned): plan = planned
        }
        if plan.campaign.devicesGiven {
            throw .validation([Diagnostic(.devicesInHeader, at: .pointer(.root.appending("devices")),
                                          "with application/x-ndjson the devices go one per line after the campaign, not in it")])
        }
        if plan.channel != nil {
            throw .validation([Diagnostic(PayloadErrorCode.conflictingFields.diagnosticCode, at: .pointer(.root.appending("channel")),
                                          "a channel campaign has no device lines: send it as application/json")])
        }
        // A device line is a token only, so every device gets the shared body: one that
        // cannot be built (too large, a placeholder no line can fill) is refused now, as
        // in the JSON form, not accepted and then failed once per device. Its pointer is
        // the campaign, the first line.
        if let failure = plan.bodies.failure {
            let atCampaign = PayloadError(failure.code, at: .root, failure.message, linkCode: failure.linkCode)
            throw CampaignProblems.problem(for: CampaignRejection(problems: [atCampaign]), app: app.name, metrics: metrics)
        }
        var errors: [Diagnostic] = []
        var count = 0
        for line in lines {
            count += 1
            if case .failure(let problem) = line.token, errors.count < 20 {
                errors.append(Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .line(line.number, file: nil), problem.message))
            }
        }
        if count == 0 {
            errors.append(Diagnostic(PayloadErrorCode.noDevices.diagnosticCode, at: .line(2, file: nil), "no device lines after the campaign"))
        }
        guard errors.isEmpty else { throw .validation(errors) }
        return (plan, lines, count)
    }

    /// `?parts=true`: the campaign's devices come in parts (`CampaignPartEndpoints`).
    /// Given once at most (`QueryParameters`); `true` is the only value.
    static func partsFlag(_ request: HTTPRequest) throws(Problem) -> Bool {
        guard let value = request.queryValue("parts") else { return false }
        guard value == "true" else {
            throw .invalidQuery([Diagnostic(.invalidValue, at: .parameter("parts"),
                                            "expected true (the devices follow in parts), or leave it out")])
        }
        return true
    }

    /// The campaign of `POST /v1/campaigns?parts=true`: without devices (they come in
    /// parts), not a channel, with a body every device can share (a part is tokens only),
    /// and no `confirm_devices` yet (the count is known at the start, where it is given).
    static func planInParts(_ json: JSON, app: GatewayApp, campaigns: DurableCampaigns, metrics: Metrics) throws(Problem) -> CampaignPlan {
        let plan: CampaignPlan
        switch app.plan(json: json, requireDevices: false) {
        case .failure(let rejection): throw CampaignProblems.problem(for: rejection, app: app.name, metrics: metrics)
        case .success(let planned): plan = planned
        }
        var errors: [Diagnostic] = []
        if plan.campaign.devicesGiven {
            errors.append(Diagnostic(.devicesInHeader, at: .pointer(.root.appending("devices")),
                                     "with ?parts=true the devices go in parts (PUT /v1/campaigns/{id}/parts/{part}), not in the campaign"))
        }
        if plan.channel != nil {
            errors.append(Diagnostic(PayloadErrorCode.conflictingFields.diagnosticCode, at: .pointer(.root.appending("channel")),
                                     "a channel campaign has no devices to send in parts"))
        }
        if plan.campaign.confirmDevices != nil {
            errors.append(Diagnostic(.invalidValue, at: .pointer(.root.appending("confirm_devices")),
                                     "the device count is known once the parts are in: give confirm_devices to POST /v1/campaigns/{id}/start"))
        }
        errors += campaigns.scheduleProblems(plan.campaign)
        guard errors.isEmpty else { throw .validation(errors) }
        // Every device gets the shared body: one that cannot be built is refused now.
        if let failure = plan.bodies.failure {
            let atCampaign = PayloadError(failure.code, at: .root, failure.message, linkCode: failure.linkCode)
            throw CampaignProblems.problem(for: CampaignRejection(problems: [atCampaign]), app: app.name, metrics: metrics)
        }
        return plan
    }

    /// 201 with the new campaign (`filling`) and `Location`; 200 with `Idempotent-Replayed`
    /// for a key seen before with the same request.
    static func answerFilling(_ accepted: DurableCampaigns.Accepted, key: String?, campaigns: DurableCampaigns) throws(Problem) -> HTTPResponse {
        let now = campaigns.clock.wallSeconds()
        switch accepted {
        case .created(let id, _, _, _):
            guard let summary = try fromStorage(campaigns.storage.campaign(id: id), catching: storageProblem) else {
                throw storageProblem(StorageError(.campaignNotFound, "campaign \(id) was created but cannot be read back"))
            }
            return jsonResponse(status: 201, CampaignJSON.summary(summary, now: now), headers: [("Location", "/v1/campaigns/" + id)])
        case .replayed(let summary):
            return jsonResponse(CampaignJSON.summary(summary, now: now),
                                headers: [("Location", "/v1/campaigns/" + summary.id), ("Idempotent-Replayed", "true")])
        case .conflict(let record):
            throw .idempotencyConflict(key: key ?? "", campaignID: record.campaignID)
        }
    }

    static func answer(_ accepted: DurableCampaigns.Accepted, key: String?) throws(Problem) -> HTTPResponse {
        switch accepted {
        case .created(let id, let devices, let skipped, let dryRun):
            return accepted202(id: id, devices: devices, skipped: skipped, dryRun: dryRun, replayed: false)
        case .replayed(let summary):
            return accepted202(id: summary.id, devices: summary.devices, skipped: summary.counts[.skipped] ?? 0,
                               dryRun: summary.dryRun, replayed: true)
        case .conflict(let record):
            throw .idempotencyConflict(key: key ?? "", campaignID: record.campaignID)
        }
    }

    static func accepted202(id: String, devices: Int, skipped: Int, dryRun: Bool, replayed: Bool) -> HTTPResponse {
        var w = JSONWriter()
        w.object { w in
            w.member("id", id)
            w.member("status_url", "/v1/campaigns/" + id)
            w.member("devices", devices)
            w.member("skipped", skipped)
            w.member("dry_run", dryRun)
            w.member("replayed", replayed)
        }
        w.raw("\n")
        var headers: [(name: String, value: String)] = [("Location", "/v1/campaigns/" + id)]
        if replayed { headers.append(("Idempotent-Replayed", "true")) }
        return jsonResponse(status: 202, w.bytes, headers: headers)
    }
}

/// `Idempotency-Key`: 1–255 visible ASCII characters (the IETF draft's opaque string).
enum IdempotencyKey {
    static func isValid(_ key: String) -> Bool {
        (1...255).contains(key.utf8.count) && key.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}

/// `value`, or the problem its storage error is: by default 503 `storageUnavailable`;
/// `catching` gives an endpoint's own problem for some errors (nil: the default).
func fromStorage<T>(_ value: @autoclosure () throws(StorageError) -> T,
                    catching: (StorageError) -> Problem? = { _ in nil }) throws(Problem) -> T {
    do throws(StorageError) { return try value() } catch { throw catching(error) ?? .storageUnavailable(error) }
}

extension Problem {
    static func storageUnavailable(_ error: StorageError) -> Problem {
        Problem(status: 503, code: .storageUnavailable, title: "Service Unavailable",
                detail: "the campaign store cannot be used right now: \(error.description)", headers: [("Retry-After", "5")])
    }

    /// 422: more devices than `guard.confirmAbove` and no (or a wrong) `confirm_devices`.
    static func confirmationRequired(_ refusal: Diagnostic) -> Problem {
        Problem(status: 422, code: .confirmationRequired, title: "Unprocessable Content", detail: refusal.message, errors: [refusal])
    }

    /// 409: pause, resume or cancel of a campaign that has finished, naming its state.
    static func campaignFinished(_ summary: CampaignSummary, action: LifecycleAction, now: Double) -> Problem {
        let status = summary.status(at: now).rawValue
        return Problem(status: 409, code: .campaignFinished, title: "Conflict",
                       detail: "campaign \(summary.id) is \(status); it cannot be \(action == .cancel ? "cancelled" : action == .pause ? "paused" : "resumed")",
                       errors: [Diagnostic(.campaignFinished, at: .parameter("id"), "the campaign is \(status)")])
    }

    static let invalidIdempotencyKey = Problem(
        status: 400, code: .invalidHeader, title: "Bad Request",
        detail: "Idempotency-Key must be 1 to 255 visible ASCII characters",
        errors: [Diagnostic(.invalidIdempotencyKey, at: .header("Idempotency-Key"), "expected 1 to 255 visible ASCII characters")])

    static func idempotencyConflict(key: String, campaignID: String) -> Problem {
        Problem(status: 409, code: .idempotencyKeyReused, title: "Conflict",
                detail: "Idempotency-Key \(JSONWriter.quoted(key)) was already used for campaign \(campaignID) with a different request body",
                errors: [Diagnostic(.idempotencyKeyReused, at: .header("Idempotency-Key"),
                                    "already used for campaign \(campaignID) with a different body")])
    }
}
