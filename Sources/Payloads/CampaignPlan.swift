import APNsCore
import DeepLinks
import StrictJSON

/// A validated campaign, ready to become requests: defaults applied, template resolved,
/// link canonicalised, the constant parts of the body rendered once. Building a request
/// for a device is a byte copy plus the device's variables — cheap enough to call per
/// device from many threads (the plan is immutable and `Sendable`).
public struct CampaignPlan: Sendable {
    /// The campaign as the caller wrote it.
    public let campaign: Campaign
    public let pushType: PushType
    /// The bundle id with the push type's suffix.
    public let topic: String
    public let priority: Int
    /// The campaign-wide canonical link; nil when there is none or it varies by device.
    public let link: CanonicalLink?
    /// The template used, if any.
    public let template: Template?

    /// The typed part of the request every device shares.
    public let message: APNsMessage
    /// The bodies the planner rendered while checking the campaign's own devices, kept so
    /// nothing renders them a second time (see `PlannedBodies`).
    public internal(set) var bodies: PlannedBodies
    let layout: BodyLayout
    let deviceLink: DeviceLink?

    init(campaign: Campaign, pushType: PushType, topic: String, priority: Int, link: CanonicalLink?,
         template: Template?, layout: BodyLayout, deviceLink: DeviceLink?) {
        self.campaign = campaign
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.link = link
        self.template = template
        self.layout = layout
        self.deviceLink = deviceLink
        message = APNsMessage(pushType: pushType, topic: topic, priority: priority,
                              expiration: campaign.expiration, collapseId: campaign.collapseId, channel: campaign.channel)
        bodies = PlannedBodies(shared: [], own: [:], failure: nil)
    }

    /// Where problems with a device that is not in the campaign's list point.
    public static let devicesPath = JSONPath.root.appending("devices")

    /// The broadcast channel the campaign goes to instead of devices (then `devices` is that
    /// one channel).
    public var channel: String? { campaign.channel }

    /// The campaign's own devices (a sender may also bring devices from elsewhere).
    public var devices: [Device] { campaign.devices }
    /// The most bytes APNs accepts for this campaign's push type.
    public var payloadLimit: Int { pushType.payloadLimit }

    /// The request for one device, with the given `apns-id`.
    public func request(for device: Device, apnsID: String) throws(PayloadError) -> APNsRequest {
        request(for: device, body: try body(for: device).bytes, apnsID: apnsID)
    }

    func request(for device: Device, body: [UInt8], apnsID: String) -> APNsRequest {
        message.request(to: device.token, apnsID: apnsID, body: body)
    }

    /// The request for the campaign's `position`-th device, from the body the planner
    /// rendered (nothing is rendered again).
    public func plannedRequest(forDeviceAt position: Int, apnsID: String) -> APNsRequest {
        message.request(to: devices[position].token, apnsID: apnsID, body: bodies.own(at: position) ?? bodies.shared)
    }

    /// The request for one device with a random `apns-id` drawn from `rng`.
    public func request<R: RandomNumberGenerator>(for device: Device, using rng: inout R) throws(PayloadError) -> APNsRequest {
        try request(for: device, apnsID: APNsID.random(using: &rng))
    }

    /// The request for one device with a random `apns-id`.
    public func request(for device: Device) throws(PayloadError) -> APNsRequest {
        try request(for: device, apnsID: APNsID.random())
    }

    /// The exact body bytes for one device, shortened when the campaign allows it.
    /// `path` is where errors point (the device's place in its list).
    public func body(for device: Device, at path: JSONPath = CampaignPlan.devicesPath) throws(PayloadError) -> PayloadBody {
        let limit = payloadLimit
        let bytes = try render(device, at: path, bodyOverride: nil)
        if bytes.count <= limit { return PayloadBody(bytes: bytes, truncated: false) }
        guard campaign.truncate, let index = layout.bodyIndex, case .text(let text) = layout.pieces[index],
              case .success(let full) = text.plainText(for: device)
        else {
            throw tooLarge(bytes.count, at: path, hint: campaign.truncate ? "there is no alert body to shorten" : "set \"truncate\": true to shorten the body")
        }
        var escaped: [UInt8] = []
        JSONWriter.appendEscaped(full, to: &escaped)
        guard let short = Truncation.shorten(full, toEscapedBytes: escaped.count - (bytes.count - limit)) else {
            throw tooLarge(bytes.count, at: path, hint: "even an empty body does not fit")
        }
        let shortened = try render(device, at: path, bodyOverride: short)
        guard shortened.count <= limit else { throw tooLarge(bytes.count, at: path, hint: "shortening the body is not enough") }
        return PayloadBody(bytes: shortened, truncated: true)
    }

    private func tooLarge(_ size: Int, at path: JSONPath, hint: String) -> PayloadError {
        PayloadError(.payloadTooLarge, at: path,
                     "payload is \(size) bytes; the limit for \(pushType.rawValue) pushes is \(payloadLimit) (\(hint))")
    }

    @inline(__always)
    private func render(_ device: Device, at path: JSONPath, bodyOverride: String?) throws(PayloadError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(layout.estimatedSize)
        for (index, piece) in layout.pieces.enumerated() {
            switch piece {
            case .bytes(let bytes):
                out.append(contentsOf: bytes)
            case .text(let text):
                if let bodyOverride, index == layout.bodyIndex {
                    JSONWriter.appendEscaped(bodyOverride, to: &out)
                } else if let missing = text.append(for: device, to: &out) {
                    throw CampaignPlanner.missingVariable(missing, at: path)
                }
            case .number(let name, let campaignValue):
                guard let value = device.variable(name) ?? campaignValue else { throw CampaignPlanner.missingVariable(name, at: path) }
                if let why = TemplateNumbers.problem(value) {
                    throw PayloadError(.invalidValue, at: path, "variable \(TextSafety.quoted(name)) goes into the Live Activity as a number: \(why)")
                }
                out.append(contentsOf: value.utf8)
            case .link:
                guard let deviceLink else { continue }
                switch deviceLink.resolve(for: device, at: path) {
                case .success(let resolved): out.append(contentsOf: resolved.bytes)
                case .failure(let error): throw error
                }
            }
        }
        return out
    }

    /// The canonical link a device gets: the campaign's, or the one its variables make.
    public func link(for device: Device) -> CanonicalLink? {
        guard let deviceLink else { return link }
        if case .success(let resolved) = deviceLink.resolve(for: device, at: .root) { return resolved.link }
        return nil
    }
}

/// The bodies of a planned campaign, each rendered once, by the planner: the first
/// device's body is the one most share (`shared`); a device whose body differs keeps its
/// own. A plan without devices of its own (device lists streamed after it, tokens only)
/// renders the body of a device without variables once: every such device gets exactly
/// that body, or `failure` when it cannot be built.
public struct PlannedBodies: Sendable {
    public var shared: [UInt8]
    var own: [Int: [UInt8]]
    /// Why the body of a device without variables cannot be built (streamed lists only).
    public var failure: PayloadError?

    /// The body of the campaign's `index`-th device when it is not `shared`.
    public func own(at index: Int) -> [UInt8]? { own[index] }
}

/// A body as it will be sent.
public struct PayloadBody: Sendable, Equatable {
    public var bytes: [UInt8]
    /// Whether the alert body was shortened to fit.
    public var truncated: Bool
}
