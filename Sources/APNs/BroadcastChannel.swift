import APNsCore
import StrictJSON

/// Apple's `message-storage-policy` for a broadcast channel: whether APNs keeps the most
/// recent message for devices that are offline when it is sent.
public enum ChannelStoragePolicy: Int, Sendable, CaseIterable {
    /// 0: nothing is stored; a broadcast on the channel must have `apns-expiration: 0`.
    case noMessageStored = 0
    /// 1: the most recent message is stored.
    case mostRecentMessageStored = 1

    /// `no-message-stored`, `most-recent-message-stored`: the names the CLI also accepts.
    public var name: String {
        switch self {
        case .noMessageStored: return "no-message-stored"
        case .mostRecentMessageStored: return "most-recent-message-stored"
        }
    }

    /// `0`, `1`, or a policy's name.
    public init?(text: String) {
        if let value = Int(text), let policy = ChannelStoragePolicy(rawValue: value) { self = policy; return }
        guard let policy = Self.allCases.first(where: { $0.name == text }) else { return nil }
        self = policy
    }
}

/// One request to Apple's channel management API, for one app (bundle id).
public enum ChannelOperation: Sendable, Equatable {
    /// `POST /1/apps/<bundle id>/channels` with the policy; APNs answers 201 and the new
    /// id in `apns-channel-id`.
    case create(ChannelStoragePolicy)
    /// `GET /1/apps/<bundle id>/channels` with `apns-channel-id`: the channel's settings.
    case read(channelId: String)
    /// `GET /1/apps/<bundle id>/all-channels`: every channel id of the app.
    case list
    /// `DELETE /1/apps/<bundle id>/channels` with `apns-channel-id`; APNs answers 204.
    case delete(channelId: String)

    public var method: String {
        switch self {
        case .create: return "POST"
        case .read, .list: return "GET"
        case .delete: return "DELETE"
        }
    }

    public func path(bundleId: String) -> String {
        if case .list = self { return "/1/apps/\(bundleId)/all-channels" }
        return "/1/apps/\(bundleId)/channels"
    }

    public var channelId: String? {
        switch self {
        case .read(let id), .delete(let id): return id
        case .create, .list: return nil
        }
    }

    /// Only a create has a body: `{"message-storage-policy":N,"push-type":"LiveActivity"}`.
    public var body: [UInt8] {
        guard case .create(let policy) = self else { return [] }
        var w = JSONWriter()
        w.object { w in
            w.member("message-storage-policy", policy.rawValue)
            w.member("push-type", "LiveActivity")
        }
        return w.bytes
    }

    /// Whether sending it twice does no harm: every operation but a create (a create
    /// that got a 500 may have made a channel, so it is not retried).
    var isIdempotent: Bool {
        if case .create = self { return false }
        return true
    }

    /// The name the CLI and the logs use.
    public var name: String {
        switch self {
        case .create: return "create"
        case .read: return "show"
        case .list: return "list"
        case .delete: return "delete"
        }
    }
}

/// A channel as APNs describes it.
public struct BroadcastChannel: Sendable, Equatable {
    public var id: String
    /// Known after a create or a read; a list gives ids only.
    public var storagePolicy: ChannelStoragePolicy?
    /// `LiveActivity`, the only push type Apple has for channels so far.
    public var pushType: String?

    public init(id: String, storagePolicy: ChannelStoragePolicy? = nil, pushType: String? = nil) {
        self.id = id
        self.storagePolicy = storagePolicy
        self.pushType = pushType
    }
}

/// What a channel management request came to.
public enum ChannelAnswer: Sendable, Equatable {
    case created(BroadcastChannel)
    case channel(BroadcastChannel)
    case channels([String])
    case deleted(String)
}

/// Why a channel management request did not succeed.
public enum ChannelFailure: Error, Sendable, Equatable {
    /// APNs answered with an error status and Apple's reason.
    case refused(status: Int, reason: APNsReason)
    /// No usable answer: not sent (key held, unreachable), no answer, or an answer that
    /// is not what Apple documents (the message says what was wrong).
    case transport(TransportFailure)

    /// Apple's reason name, or pushgate's delivery code: the diagnostic code.
    public var code: String {
        switch self {
        case .refused(_, let reason): return reason.rawValue
        case .transport(let failure): return failure.code.rawValue
        }
    }

    public var message: String {
        switch self {
        case .refused(let status, let reason): return "APNs answered \(status) \(reason.rawValue)" + (Self.hints[reason].map { ": " + $0 } ?? "")
        case .transport(let failure): return failure.message
        }
    }

    /// What Apple's documentation says a reason means, for the reasons of channels.
    static let hints: [APNsReason: String] = [
        .channelNotRegistered: "no such channel in this environment (channels of sandbox and production are separate)",
        .badChannelId: "the channel id is not properly encoded or is too long",
        .missingChannelId: "the request named no channel",
        .cannotCreateChannelConfig: "the app has reached its limit of channels (10,000 per environment); delete channels it no longer uses",
        .featureNotEnabled: "broadcast push is not enabled for this app (the Broadcast Capability in the developer account)",
        .invalidPushType: "the push type is not liveactivity (the only one channels carry)",
        .missingPushType: "the request has no push type",
        .topicDisallowed: "the signing key may not push to this bundle id",
    ]
}

/// The answer with its `apns-request-id` (Apple's id for the request, echoed when given).
public struct ChannelResult: Sendable, Equatable {
    public var requestId: String?
    public var outcome: Result<ChannelAnswer, ChannelFailure>

    public init(requestId: String?, outcome: Result<ChannelAnswer, ChannelFailure>) {
        self.requestId = requestId
        self.outcome = outcome
    }
}

extension DiagnosticCode {
    /// Not a channel id APNs could have given (checked before anything is sent).
    public static let invalidChannelId = DiagnosticCode(rawValue: "invalidChannelId")
    /// A channel campaign to a channel that stores no message (`message-storage-policy` 0)
    /// without `"expiration": 0`: Apple takes only broadcasts that expire at once there.
    public static let channelStoresNoMessage = DiagnosticCode(rawValue: "channelStoresNoMessage")
}

extension DiagnosticDomain {
    /// Broadcast channels: pushgate's own checks (Apple's answers are in `apns`).
    public static let channels = DiagnosticDomain("channels", [.invalidChannelId, .channelStoresNoMessage])
}
