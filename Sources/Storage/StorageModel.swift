/// Where one device of a campaign stands. Raw values are stored; never renumber.
public enum DeliveryState: Int, Sendable, CaseIterable {
    case pending = 0
    /// Claimed by a dispatcher and being sent.
    case inFlight = 1
    /// A transient failure; sent again at `nextAttemptAt`.
    case retrying = 2
    case delivered = 3
    case failed = 4
    case unregistered = 5
    /// Not sent: the token is dead (and not registered again since).
    case skipped = 6
    case dryRun = 7
    /// Not sent: the campaign was cancelled first.
    case cancelled = 8
    /// Not sent: the campaign's `expires_at` came first.
    case expired = 9

    public var name: String {
        switch self {
        case .pending: "pending"
        case .inFlight: "in-flight"
        case .retrying: "retrying"
        case .delivered: "delivered"
        case .failed: "failed"
        case .unregistered: "unregistered"
        case .skipped: "skipped"
        case .dryRun: "dry-run"
        case .cancelled: "cancelled"
        case .expired: "expired"
        }
    }

    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }

    public var isFinal: Bool { rawValue >= DeliveryState.delivered.rawValue }
}

/// The typed part of a campaign's APNs request, as stored: one column each, so a backend
/// never parses header text. The outbox turns it into the request through the same
/// function preview uses.
public struct StoredMessage: Sendable, Equatable {
    /// `apns-push-type`, Apple's name (`alert`, `background`, …).
    public var pushType: String
    public var topic: String
    public var priority: Int
    public var expiration: Int64?
    public var collapseId: String?
    /// The broadcast channel id of a channel campaign (its one delivery is the broadcast).
    public var channel: String?

    public init(pushType: String, topic: String, priority: Int, expiration: Int64? = nil, collapseId: String? = nil,
                channel: String? = nil) {
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.channel = channel
    }
}

/// Which queue a campaign's devices wait in. Claims serve the transactional lane first
/// and keep a guaranteed share (`bulkShare`) for bulk, and go round-robin by campaign
/// within a lane. Raw values are stored; never renumber.
public enum Lane: Int, Sendable, CaseIterable {
    /// Small campaigns someone waits for (a sign-in code, a receipt).
    case transactional = 0
    /// Big blasts: they go at full speed when nothing transactional waits.
    case bulk = 1

    public var name: String {
        switch self {
        case .transactional: "transactional"
        case .bulk: "bulk"
        }
    }

    public init?(name: String) {
        guard let lane = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = lane
    }

    /// The part of every claim kept for bulk while both lanes have devices due, so a
    /// stream of transactional campaigns slows a blast down but never stops it.
    public static let bulkShare = 0.25
}

/// A campaign as it is written, before its devices.
public struct NewCampaign: Sendable {
    public var id: String
    public var createdAt: Double
    public var dryRun: Bool
    public var message: StoredMessage
    /// The body most devices share.
    public var body: [UInt8]
    /// The first 24 characters of every device's `apns-id` (`xxxxxxxx-xxxx-xxxx-xxxx-`).
    public var apnsIDPrefix: String
    public var idempotency: IdempotencyClaim?
    /// Nothing is sent before this (UNIX seconds); nil: at once.
    public var sendAt: Double?
    /// Devices not sent by then end `expired`; nil: never.
    public var expiresAt: Double?
    /// Check, before committing, that no token appears twice (for device lists that were
    /// not checked on the way in); the insert fails with `duplicateToken` if one does.
    public var rejectDuplicateTokens = false
    /// The configured app it is for, the APNs environment it goes to, and the API key that
    /// created it ("" when no keys are configured).
    public var app = ""
    public var environment = ""
    public var owner = ""
    /// nil: chosen by size once the devices are counted — `transactional` up to
    /// `transactionalMaxDevices`, else `bulk`.
    public var lane: Lane?
    public var transactionalMaxDevices = NewCampaign.defaultTransactionalMaxDevices
    /// The lane boundary when none is configured (and for a campaign filled in parts).
    public static let defaultTransactionalMaxDevices = 100
    /// At most this many of its devices claimed per second (over every process); nil: no cap.
    public var ratePerSecond: Double?
    /// Created without its devices: they come in parts (`CampaignFilling`), and nothing is
    /// sent before `finishFilling`.
    public var filling = false

    public init(id: String, createdAt: Double, dryRun: Bool, message: StoredMessage, body: [UInt8],
                apnsIDPrefix: String, idempotency: IdempotencyClaim? = nil) {
        self.id = id
        self.createdAt = createdAt
        self.dryRun = dryRun
        self.message = message
        self.body = body
        self.apnsIDPrefix = apnsIDPrefix
        self.idempotency = idempotency
    }
}

/// An `Idempotency-Key` and the hash of the request it came with.
public struct IdempotencyClaim: Sendable, Equatable {
    public var key: String
    public var requestSHA256: String
    /// Keys recorded before this time have expired and may be used again.
    public var notBefore: Double
    public init(key: String, requestSHA256: String, notBefore: Double) {
        self.key = key
        self.requestSHA256 = requestSHA256
        self.notBefore = notBefore
    }
}

/// A key seen before, and what it created.
public struct IdempotencyRecord: Sendable, Equatable {
    public var requestSHA256: String
    public var campaignID: String
    public var createdAt: Double

    public init(requestSHA256: String, campaignID: String, createdAt: Double) {
        self.requestSHA256 = requestSHA256
        self.campaignID = campaignID
        self.createdAt = createdAt
    }
}

/// One device as written with its campaign.
public struct NewDelivery: Sendable {
    public var token: String
    /// nil: the campaign's shared body.
    public var body: [UInt8]?
    /// Set when the request could not be built: stored as failed with this reason.
    public var failureReason: String?

    public init(token: String, body: [UInt8]? = nil, failureReason: String? = nil) {
        self.token = token
        self.body = body
        self.failureReason = failureReason
    }
}

/// What inserting a campaign did.
public enum InsertOutcome: Sendable, Equatable {
    case created(devices: Int, skipped: Int)
    /// The idempotency key was already used (by a request that finished first).
    case keyAlreadyUsed(IdempotencyRecord)
}

/// What an operator set a campaign to. Raw values are stored; never renumber.
public enum CampaignControl: Int, Sendable {
    case running = 0
    case paused = 1
    /// Final: no new sends; what was not sent ends `cancelled`.
    case cancelled = 2
}

/// `POST /v1/campaigns/{id}/pause|resume|cancel`, `pushgate campaigns pause|resume|cancel`.
public enum LifecycleAction: String, Sendable, CaseIterable {
    case pause, resume, cancel
}

/// What a lifecycle action did.
public enum LifecycleOutcome: Sendable, Equatable {
    case changed(CampaignSummary)
    /// Already so (pausing a paused campaign, resuming a running one, cancelling a cancelled one).
    case unchanged(CampaignSummary)
    /// Not possible in the campaign's state (it finished): the campaign as it is.
    case refused(CampaignSummary)
    case notFound
}

/// A campaign's state as reported: `scheduled` → `sending` → `completed`, or `paused`,
/// `cancelled`, `expired`.
public enum CampaignStatus: String, Sendable, CaseIterable {
    case scheduled, sending, paused, completed, cancelled, expired
    /// Created to be filled in parts: not sent before it is started.
    case filling

    /// No device of it will be sent any more.
    public var isFinal: Bool { self == .completed || self == .cancelled || self == .expired }
}

/// A campaign with its counts by state.
public struct CampaignSummary: Sendable, Equatable {
    public var seq: Int64
    public var id: String
    public var createdAt: Double
    public var dryRun: Bool
    public var devices: Int
    public var finishedAt: Double?
    public var counts: [DeliveryState: Int]
    public var app = ""
    public var environment = ""
    /// The API key that created it ("" for none).
    public var owner = ""
    public var sendAt: Double?
    public var expiresAt: Double?
    public var control: CampaignControl = .running
    /// When it was last paused, resumed or cancelled.
    public var controlledAt: Double?
    public var lane: Lane = .transactional
    public var ratePerSecond: Double?
    /// A channel campaign's broadcast channel id.
    public var channel: String?
    /// Taking its devices in parts (`CampaignFilling`): nothing is sent yet.
    public var filling = false
    /// Why the campaign failed (a stored segment that does not decode); nil: it did not.
    public var failure: String?

    public init(seq: Int64, id: String, createdAt: Double, dryRun: Bool, devices: Int, finishedAt: Double?,
                counts: [DeliveryState: Int], sendAt: Double? = nil, expiresAt: Double? = nil,
                control: CampaignControl = .running, controlledAt: Double? = nil) {
        self.seq = seq
        self.id = id
        self.createdAt = createdAt
        self.dryRun = dryRun
        self.devices = devices
        self.finishedAt = finishedAt
        self.counts = counts
        self.sendAt = sendAt
        self.expiresAt = expiresAt
        self.control = control
        self.controlledAt = controlledAt
    }

    public func status(at now: Double) -> CampaignStatus {
        if control == .cancelled { return .cancelled }
        if finishedAt != nil { return (counts[.expired] ?? 0) > 0 ? .expired : .completed }
        if let expiresAt, expiresAt <= now { return .expired }
        if filling { return .filling }
        if control == .paused { return .paused }
        if let sendAt, sendAt > now { return .scheduled }
        return .sending
    }

    /// Devices that will never be sent because the campaign was cancelled or expired
    /// (those still waiting are counted too while they are being closed).
    public func notSent(at now: Double) -> Int {
        let closed = (counts[.cancelled] ?? 0) + (counts[.expired] ?? 0)
        switch status(at: now) {
        case .cancelled, .expired: return closed + (counts[.pending] ?? 0) + (counts[.retrying] ?? 0)
        default: return closed
        }
    }
}

/// Devices of one campaign in one state with one APNs reason.
public struct ReasonCount: Sendable, Equatable {
    public var state: DeliveryState
    public var reason: String
    public var count: Int

    public init(state: DeliveryState, reason: String, count: Int) {
        self.state = state
        self.reason = reason
        self.count = count
    }

    /// Most first, then by state and reason: the same order from every backend.
    public static func ordered(_ counts: [ReasonCount]) -> [ReasonCount] {
        counts.sorted { a, b in
            a.count != b.count ? a.count > b.count : a.state != b.state ? a.state.rawValue < b.state.rawValue : a.reason < b.reason
        }
    }
}

/// What one retention pass removed.
public struct PurgeProgress: Sendable, Equatable {
    public var deliveries = 0
    public var campaigns = 0
    /// More finished campaigns older than the cut-off remain.
    public var more = false

    public init(deliveries: Int = 0, campaigns: Int = 0, more: Bool = false) {
        self.deliveries = deliveries
        self.campaigns = campaigns
        self.more = more
    }
}

/// The file's pages, for retention and its soak test.
public struct PageStatistics: Sendable, Equatable {
    public var pages: Int
    public var freePages: Int
    public var pageSize: Int
    public var bytes: Int { pages * pageSize }

    public init(pages: Int, freePages: Int, pageSize: Int) {
        self.pages = pages
        self.freePages = freePages
        self.pageSize = pageSize
    }
}

/// A campaign that finished, waiting to be sent to the webhook (`campaign.finished`).
public struct CampaignEvent: Sendable, Equatable {
    public var seq: Int64
    public var campaign: CampaignSummary

    public init(seq: Int64, campaign: CampaignSummary) {
        self.seq = seq
        self.campaign = campaign
    }
}

/// The part of a campaign every device's request shares.
public struct CampaignMessage: Sendable {
    public var id: String
    public var dryRun: Bool
    public var message: StoredMessage
    public var body: [UInt8]
    public var apnsIDPrefix: String
    /// Which app's credentials send it, in which environment.
    public var app = ""
    public var environment = ""

    public init(id: String, dryRun: Bool, message: StoredMessage, body: [UInt8], apnsIDPrefix: String, app: String = "", environment: String = "") {
        self.id = id
        self.dryRun = dryRun
        self.message = message
        self.body = body
        self.apnsIDPrefix = apnsIDPrefix
        self.app = app
        self.environment = environment
    }

    public var route: CampaignRoute { CampaignRoute(app: app, environment: environment, dryRun: dryRun) }
}

/// The way a campaign goes out: its app's credentials and connection pool in its
/// environment, or the dry-run sender. ('' for rows stored before campaigns named them.)
public struct CampaignRoute: Hashable, Sendable {
    public var app: String
    public var environment: String
    public var dryRun: Bool

    public init(app: String, environment: String, dryRun: Bool) {
        self.app = app
        self.environment = environment
        self.dryRun = dryRun
    }
}

/// The routes a claim leaves alone for now: those that cannot send (their signing key is
/// held by APNs, their connection pool cannot reach it). Their campaigns' devices stay due
/// and spend nothing, while every other route's campaigns are claimed as usual.
public struct ClaimHolds: Sendable {
    public static let none = ClaimHolds { _ in false }

    public let isHeld: @Sendable (CampaignRoute) -> Bool

    public init(_ isHeld: @escaping @Sendable (CampaignRoute) -> Bool) {
        self.isHeld = isHeld
    }
}

/// Who claims, and for how long: a claim is a lease that its owner renews while the send
/// is in flight (`renewLeases`); once expired, any claimer may take it over.
public struct LeaseTerms: Sendable, Equatable {
    /// The instance, as `host/pid/start`.
    public var owner: String
    public var seconds: Double

    public init(owner: String, seconds: Double) {
        self.owner = owner
        self.seconds = seconds
    }

    public init(instance: InstanceID, seconds: Double) {
        self.init(owner: "\(instance.host)/\(instance.pid)/\(instance.startedAt)", seconds: seconds)
    }
}

/// A delivery claimed for sending.
public struct ClaimedDelivery: Sendable {
    public var campaign: Int64
    public var index: Int
    public var token: String
    /// nil: the campaign's body.
    public var body: [UInt8]?
    /// Attempts including this one.
    public var attempt: Int
    /// The fencing number of this claim: a result is recorded only with the current one.
    public var lease: Int64

    public init(campaign: Int64, index: Int, token: String, body: [UInt8]?, attempt: Int, lease: Int64) {
        self.campaign = campaign
        self.index = index
        self.token = token
        self.body = body
        self.attempt = attempt
        self.lease = lease
    }
}

/// The result of one attempt, to be recorded.
public struct DeliveryUpdate: Sendable {
    public var campaign: Int64
    public var index: Int
    public var state: DeliveryState
    public var status: Int?
    public var reason: String?
    public var apnsID: String?
    /// `apns-unique-id` (sandbox answers only).
    public var apnsUniqueID: String?
    public var timestampMilliseconds: Int64?
    /// For `.retrying`: when to try again.
    public var nextAttemptAt: Double?
    /// The attempt was not the device's (sends were paused): it is not counted.
    public var refundAttempt = false
    /// The claim's fencing number: recorded only if it is still the row's current lease.
    public var lease: Int64

    public init(campaign: Int64, index: Int, state: DeliveryState, status: Int? = nil, reason: String? = nil,
                apnsID: String? = nil, timestampMilliseconds: Int64? = nil, nextAttemptAt: Double? = nil, lease: Int64) {
        self.lease = lease
        self.campaign = campaign
        self.index = index
        self.state = state
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestampMilliseconds = timestampMilliseconds
        self.nextAttemptAt = nextAttemptAt
    }
}

/// One device's row as reported to callers.
public struct DeliveryResultRow: Sendable, Equatable {
    public var index: Int
    public var token: String
    public var state: DeliveryState
    public var attempts: Int
    public var status: Int?
    public var reason: String?
    public var apnsID: String?
    /// `apns-unique-id` (sandbox answers only).
    public var apnsUniqueID: String?
    public var timestampMilliseconds: Int64?
    public var nextAttemptAt: Double?

    public init(index: Int, token: String, state: DeliveryState, attempts: Int, status: Int?, reason: String?,
                apnsID: String?, apnsUniqueID: String? = nil, timestampMilliseconds: Int64?, nextAttemptAt: Double?) {
        self.apnsUniqueID = apnsUniqueID
        self.index = index
        self.token = token
        self.state = state
        self.attempts = attempts
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestampMilliseconds = timestampMilliseconds
        self.nextAttemptAt = nextAttemptAt
    }
}

/// A token APNs called dead.
public struct DeadToken: Sendable, Equatable {
    public var token: String
    public var timestampMilliseconds: Int64
    public var reason: String
    public var recordedAt: Double

    public init(token: String, timestampMilliseconds: Int64, reason: String, recordedAt: Double) {
        self.token = token
        self.timestampMilliseconds = timestampMilliseconds
        self.reason = reason
        self.recordedAt = recordedAt
    }
}

/// A dead token waiting to be sent to the feedback webhook.
public struct FeedbackItem: Sendable, Equatable {
    public var seq: Int64
    public var token: String
    public var timestampMilliseconds: Int64
    public var reason: String
    /// The app whose campaign learnt that the token is dead ('' for a campaign stored
    /// before campaigns named their app).
    public var app: String

    public init(seq: Int64, token: String, timestampMilliseconds: Int64, reason: String, app: String) {
        self.seq = seq
        self.token = token
        self.timestampMilliseconds = timestampMilliseconds
        self.reason = reason
        self.app = app
    }
}

/// A signing key as the token table keys it.
public struct SigningKeyName: Sendable, Hashable {
    public var teamId: String
    public var keyId: String
    /// SHA-256 of the public key, hex.
    public var fingerprint: String

    public init(teamId: String, keyId: String, fingerprint: String) {
        self.teamId = teamId
        self.keyId = keyId
        self.fingerprint = fingerprint
    }
}

/// A key's shared token and pause, as stored. All nil: nothing stored yet.
public struct StoredProviderToken: Sendable, Equatable {
    public var compact: String?
    public var issuedAt: Int64?
    public var pausedUntil: Int64?

    public init(compact: String? = nil, issuedAt: Int64? = nil, pausedUntil: Int64? = nil) {
        self.compact = compact
        self.issuedAt = issuedAt
        self.pausedUntil = pausedUntil
    }
}

/// A Live Activity token an app reported: its push-to-start token, or the update token of
/// one activity (ActivityKit's `Activity.id`).
public struct LiveActivityToken: Sendable, Equatable {
    public enum Kind: Int, Sendable, CaseIterable {
        case pushToStart = 0
        case update = 1

        public var name: String { self == .pushToStart ? "push-to-start" : "update" }
        public init?(name: String) {
            guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = kind
        }
    }

    public var app: String
    public var token: String
    public var kind: Kind
    /// The activity's id for an update token; "" for push-to-start.
    public var activity: String

    public init(app: String, token: String, kind: Kind, activity: String) {
        self.app = app
        self.token = token
        self.kind = kind
        self.activity = activity
    }
}

/// How many Live Activity tokens the registry keeps: a client that reports tokens without
/// end is refused past these, so the table and the campaigns sent by activity stay bounded.
public struct LiveActivityLimits: Sendable, Equatable {
    /// Update tokens one activity may have (its devices).
    public var perActivity: Int
    /// Tokens, push-to-start and update, one app may have.
    public var perApp: Int

    public static let defaultPerActivity = 1000
    public static let defaultPerApp = 100_000
    public static let unlimited = LiveActivityLimits(perActivity: .max, perApp: .max)

    public init(perActivity: Int = Self.defaultPerActivity, perApp: Int = Self.defaultPerApp) {
        self.perActivity = max(1, perActivity)
        self.perApp = max(1, perApp)
    }
}

/// What became of a reported Live Activity token.
public enum LiveActivityRegistration: Sendable, Equatable {
    /// Kept; with the dead-token record it revived, if any.
    case registered(revived: DeadToken?)
    /// Not kept: the activity has `LiveActivityLimits.perActivity` update tokens already.
    case activityFull(limit: Int)
    /// Not kept: the app has `LiveActivityLimits.perApp` tokens already.
    case appFull(limit: Int)
}
