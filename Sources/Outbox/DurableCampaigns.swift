import Payloads
import Storage
import StrictJSON
import Timing

/// Turns a planned campaign into outbox rows and writes them in one transaction: the
/// typed message once, the body most devices share once, and a device's own body only
/// where it differs (a device whose body cannot be built is stored as failed with the
/// reason).
public struct DurableCampaigns: Sendable {
    public let storage: any CampaignStorage
    public let dispatcher: Dispatcher
    public let idempotencyRetentionSeconds: Double
    /// `lanes.transactionalMaxDevices`: the lane of a campaign that names none.
    public let transactionalMaxDevices: Int
    public let clock: any TimeSource

    /// The Live Activity registry's bounds (`storage.liveActivityTokensPerActivity`, `…PerApp`).
    public let liveActivityLimits: LiveActivityLimits

    public init(storage: any CampaignStorage, dispatcher: Dispatcher, idempotencyRetentionSeconds: Double,
                transactionalMaxDevices: Int = 100, liveActivityLimits: LiveActivityLimits = LiveActivityLimits(),
                clock: any TimeSource) {
        self.liveActivityLimits = liveActivityLimits
        self.storage = storage
        self.dispatcher = dispatcher
        self.idempotencyRetentionSeconds = idempotencyRetentionSeconds
        self.transactionalMaxDevices = transactionalMaxDevices
        self.clock = clock
    }

    /// How far back `send_at` may be (a caller's clock a little behind): later is now.
    public static let sendAtGraceSeconds: Double = 60
    /// How far ahead a campaign may be scheduled.
    public static let maxScheduleSeconds: Double = 366 * 86_400

    /// `send_at` and `expires_at` against the clock and each other: in the past (beyond
    /// the grace), too far ahead, or expiring before it starts. Every problem at once.
    public func scheduleProblems(_ campaign: Campaign) -> [Diagnostic] {
        let now = clock.wallSeconds()
        var problems: [Diagnostic] = []
        let sendAt = campaign.sendAt.map(Double.init)
        let expiresAt = campaign.expiresAt.map(Double.init)
        func at(_ key: String) -> DiagnosticLocation { .pointer(JSONPath.root.appending(key)) }
        if let sendAt, sendAt < now - Self.sendAtGraceSeconds {
            problems.append(Diagnostic(.scheduleInPast, at: at("send_at"),
                                       "is \(RFC3339.format(sendAt)), in the past (now \(RFC3339.format(now))); leave send_at out to send at once"))
        }
        if let sendAt, sendAt > now + Self.maxScheduleSeconds {
            problems.append(Diagnostic(.invalidValue, at: at("send_at"), "is more than 366 days ahead"))
        }
        if let expiresAt, expiresAt <= now {
            problems.append(Diagnostic(.scheduleInPast, at: at("expires_at"),
                                       "is \(RFC3339.format(expiresAt)), in the past (now \(RFC3339.format(now))): nothing could be sent"))
        } else if let expiresAt, let sendAt, expiresAt <= sendAt {
            problems.append(Diagnostic(.expiresBeforeSendAt, at: at("expires_at"),
                                       "is \(RFC3339.format(expiresAt)), not after send_at \(RFC3339.format(sendAt)): nothing could be sent"))
        }
        return problems
    }

    /// Pause, resume or cancel. Takes effect at the dispatcher's next claim (woken now);
    /// a cancelled campaign's unsent devices are then ended in batches by the dispatcher.
    /// A cancel or pause also takes back, before it returns, the campaign's claimed sends
    /// not yet written to APNs (`Dispatcher.withdraw`): after the answer, only requests
    /// already on the wire may still be answered.
    public func change(_ id: String, _ action: LifecycleAction) throws(StorageError) -> LifecycleOutcome {
        let outcome = try storage.changeLifecycle(id: id, action, now: clock.wallSeconds())
        switch (outcome, action) {
        case (.changed(let summary), .cancel), (.unchanged(let summary), .cancel):
            dispatcher.withdraw(campaign: summary.seq, because: "campaign \(summary.id) was cancelled")
        case (.changed(let summary), .pause), (.unchanged(let summary), .pause):
            dispatcher.withdraw(campaign: summary.seq, because: "campaign \(summary.id) was paused")
        case (.changed, .resume):
            dispatcher.wake()
        default:
            break
        }
        return outcome
    }

    /// What `accept` did.
    public enum Accepted: Sendable {
        case created(id: String, devices: Int, skipped: Int, dryRun: Bool)
        /// The key was used before with this same request: its campaign.
        case replayed(CampaignSummary)
        /// The key was used before with a different request.
        case conflict(IdempotencyRecord)
    }

    public var idempotencyNotBefore: Double { clock.wallSeconds() - idempotencyRetentionSeconds }

    /// Idempotency keys are each API key's own: stored as "<key name> <Idempotency-Key>"
    /// (neither contains a space), so one caller's key never finds another's campaign.
    static func namespaced(_ key: String, owner: String) -> String { owner + " " + key }

    public func previous(key: String, owner: String) throws(StorageError) -> IdempotencyRecord? {
        try storage.idempotencyRecord(key: Self.namespaced(key, owner: owner), notBefore: idempotencyNotBefore)
    }

    public func replay(_ record: IdempotencyRecord, requestSHA256: String) throws(StorageError) -> Accepted {
        guard record.requestSHA256 == requestSHA256 else { return .conflict(record) }
        guard let summary = try storage.campaign(id: record.campaignID) else { return .conflict(record) }
        return .replayed(summary)
    }

    /// Writes the campaign and all its devices; returns once committed. `tokens` are the
    /// plan's own devices' tokens in order, or the tokens of a device list streamed after a
    /// plan without devices; either way every body was rendered by the planner, once
    /// (`CampaignPlan.bodies`), and is not rendered again here.
    /// `app`, `environment`: which credentials send it; `owner`: the API key that created it.
    public func accept(_ plan: CampaignPlan, tokens: TokenFeed, dryRun: Bool,
                       idempotency: (key: String, sha256: String)?, rejectDuplicateTokens: Bool,
                       app: String = "", environment: String = "", owner: String = "") throws(StorageError) -> Accepted {
        var campaign = newCampaign(plan, dryRun: dryRun, idempotency: idempotency, app: app, environment: environment, owner: owner)
        campaign.rejectDuplicateTokens = rejectDuplicateTokens
        let bodies = plan.bodies
        let failure = bodies.failure?.stableCode
        var tokens = tokens
        var index = 0
        let rows = DeliveryFeed(pulling: { () -> NewDelivery? in
            guard let token = tokens.next() else { return nil }
            defer { index += 1 }
            return NewDelivery(token: token, body: bodies.own(at: index), failureReason: failure)
        })
        switch try storage.insert(campaign, deliveries: rows, now: clock.wallSeconds()) {
        case .created(let count, let skipped):
            dispatcher.wake()
            return .created(id: campaign.id, devices: count, skipped: skipped, dryRun: dryRun)
        case .keyAlreadyUsed(let record):
            return try replay(record, requestSHA256: idempotency?.sha256 ?? "")
        }
    }

    /// The campaign row of a plan: a new id, the shared body, the schedule, lane and rate.
    func newCampaign(_ plan: CampaignPlan, dryRun: Bool, idempotency: (key: String, sha256: String)?,
                     app: String, environment: String, owner: String) -> NewCampaign {
        let id = APNsID.random()
        var campaign = NewCampaign(
            id: id, createdAt: clock.wallSeconds(), dryRun: dryRun, message: StoredMessage(plan.message), body: plan.bodies.shared,
            apnsIDPrefix: String(id.prefix(24)),
            idempotency: idempotency.map { IdempotencyClaim(key: Self.namespaced($0.key, owner: owner), requestSHA256: $0.sha256,
                                                            notBefore: idempotencyNotBefore) })
        campaign.sendAt = plan.campaign.sendAt.map(Double.init)
        campaign.expiresAt = plan.campaign.expiresAt.map(Double.init)
        campaign.app = app
        campaign.environment = environment
        campaign.owner = owner
        campaign.lane = plan.campaign.lane.map { $0 == .bulk ? .bulk : .transactional }
        campaign.transactionalMaxDevices = transactionalMaxDevices
        campaign.ratePerSecond = plan.campaign.ratePerSecond
        return campaign
    }
}

