import APNsCore
import DeepLinks
import StrictJSON

/// A campaign as the caller wrote it, after its shape has been checked: the same model
/// for CLI campaign files and HTTP request bodies. Values the caller left out are nil;
/// template defaults and Apple's defaults are applied when the campaign is planned.
public struct Campaign: Sendable, Equatable {
    public enum Message: Sendable, Equatable {
        /// `template` + `locale` + `variables`.
        case template(name: String, locale: String?)
        /// `alert`: the text as given.
        case inline(InlineAlert)
        /// Neither: badge/sound-only, background and the like.
        case none
    }

    public var message: Message = .none
    /// Campaign-wide values for `{{placeholders}}`; devices may override each.
    public var variables: [NamedValue] = []
    public var deeplink: String?
    public var pushType: PushType?
    public var priority: Int?
    /// UNIX seconds; 0 means "deliver once or drop".
    public var expiration: Int64?
    public var collapseId: String?
    public var threadId: String?
    public var category: String?
    public var badge: Int?
    public var sound: Sound?
    public var interruptionLevel: InterruptionLevel?
    /// The number exactly as written (already checked to lie in 0…1).
    public var relevanceScore: String?
    public var mutableContent: Bool?
    public var contentAvailable: Bool?
    public var targetContentId: String?
    /// Custom top-level members of the body, in written order.
    public var data: JSONObject = JSONObject()
    public var devices: [Device] = [] {
        didSet { deviceIndices = Array(devices.indices) }
    }
    /// Where each of `devices` sits in the document's list (invalid entries are left
    /// out of `devices`, so the two can differ); used in problem paths.
    var deviceIndices: [Int] = []
    /// Whether `devices` was present at all (a sender may stream devices from elsewhere).
    public var devicesGiven = false
    public var truncate = false
    /// Reserved for the HTTP API: accept, validate and plan, but never send.
    public var dryRun = false
    /// `send_at`: UNIX seconds before which the outbox sends nothing (nil: at once).
    public var sendAt: Int64?
    /// `expires_at`: UNIX seconds from which devices not yet sent end `expired` instead.
    public var expiresAt: Int64?
    /// `confirm_devices`: the device count the caller confirms (the guard against sending
    /// to everyone by mistake; see `SendGuard`).
    public var confirmDevices: Int?
    /// `app`: the configured app the campaign is for (optional when the caller has one);
    /// its route table, templates, topic and credentials apply.
    public var app: String?
    /// `environment`: `production` or `sandbox`, when the app allows a choice.
    public var environment: String?
    /// `lane`: nil chooses by size (`lanes.transactionalMaxDevices`).
    public var lane: CampaignLane?
    /// `rate_per_second`: at most this many of its devices sent per second.
    public var ratePerSecond: Double?
    public static let maxRatePerSecond: Double = 1_000_000
    /// One device in 1000 s: a slower rate's bucket window overflows a double (5e-324/s).
    public static let minRatePerSecond: Double = 0.001
    /// `live_activity`: the ActivityKit push's event and content (push type `liveactivity`).
    public var liveActivity: LiveActivity?
    /// `mdm`: the device's PushMagic (push type `mdm`); placeholders take each device's value.
    public var mdm: TemplateText?
    /// `channel`: a broadcast channel id (base64, as APNs gave it) instead of `devices`:
    /// one broadcast request reaches every Live Activity subscribed to the channel.
    public var channel: String?

    public init() {}
}

/// Which lane of the outbox a campaign waits in (APNs' own `priority` is another thing).
public enum CampaignLane: String, Sendable, CaseIterable {
    /// Served first: small campaigns someone waits for.
    case transactional
    /// Big blasts: a guaranteed share of the dispatcher, all of it when nothing else waits.
    case bulk
}

/// The `alert` dictionary with Apple's key names; every member optional.
public struct InlineAlert: Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var subtitleLocKey: String?
    public var subtitleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?
    public var launchImage: String?

    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    public var isEmpty: Bool { self == InlineAlert() }
}

/// `sound`: a file name, or the critical-alert dictionary.
public enum Sound: Sendable, Equatable {
    case named(String)
    /// `volume` is the number as written, checked to lie in 0…1.
    case critical(critical: Bool, name: String, volume: String?)
}

public enum InterruptionLevel: String, Sendable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical
}
