import DeepLinks
import StrictJSON

/// What `pushgate preview` and `POST /v1/notifications/preview` show: the exact request
/// each device would get (the first few, and a count), or every problem. Pure rendering;
/// the `apns-id` source is injected so that previews can be compared byte for byte.
public struct CampaignPreview: Sendable {
    public struct Entry: Sendable {
        public var request: APNsRequest
        public var truncated: Bool
        public var link: CanonicalLink?
    }

    public static let defaultShown = 3

    public let plan: CampaignPlan
    public let entries: [Entry]

    /// Builds the first `shown` devices' requests; `apnsID(i)` gives the i-th id.
    public init(plan: CampaignPlan, shown: Int = defaultShown, apnsID: (Int) -> String) throws(PayloadError) {
        self.plan = plan
        var entries: [Entry] = []
        for (i, device) in plan.devices.prefix(max(0, shown)).enumerated() {
            let path = JSONPath.root.appending("devices").appending(index: i)
            let body = try plan.body(for: device, at: path)
            let request = plan.request(for: device, body: body.bytes, apnsID: apnsID(i))
            entries.append(Entry(request: request, truncated: body.truncated, link: plan.link(for: device)))
        }
        self.entries = entries
    }

    /// The header the delivery layer adds, shown without its secret.
    public static let redactedAuthorization = HTTPHeader("authorization", "bearer <redacted>")

    public var text: String {
        var out = "campaign ok: \(Self.count(plan.devices.count, "device")), push type \(plan.pushType.rawValue), topic \(plan.topic), priority \(plan.priority)\n"
        if let t = plan.template {
            out += "template \(t.name)"
            if case .template(_, let locale?) = plan.campaign.message { out += ", locale \(locale)" }
            out += "\n"
        }
        for (i, e) in entries.enumerated() {
            out += "\ndevice \(i + 1) of \(plan.devices.count)\n"
            if let link = e.link { out += "deeplink \(TextSafety.escapedForDisplay(link.canonical)) → route \(link.route)\n" }
            out += "\(e.request.method) \(e.request.path)\n"
            for h in [Self.redactedAuthorization] + e.request.headers {
                out += "\(h.name): \(TextSafety.escapedForDisplay(h.value))\n"
            }
            out += "\n" + String(decoding: e.request.body, as: UTF8.self) + "\n\n"
            out += "size: \(e.request.body.count) of \(plan.payloadLimit) bytes"
            out += e.truncated ? " (alert body shortened to fit)\n" : "\n"
        }
        let hidden = plan.devices.count - entries.count
        if hidden > 0 { out += "\n… and \(Self.count(hidden, "more device")), not shown (all valid)\n" }
        return out
    }

    public var json: [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"valid\":true,\"push_type\":")
        w.string(plan.pushType.rawValue)
        w.raw(",\"topic\":")
        w.string(plan.topic)
        w.raw(",\"priority\":")
        w.int(plan.priority)
        w.raw(",\"template\":")
        if let t = plan.template { w.string(t.name) } else { w.null() }
        w.raw(",\"device_count\":")
        w.int(plan.devices.count)
        w.raw(",\"shown\":")
        w.int(entries.count)
        w.raw(",\"requests\":[")
        for (i, e) in entries.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"device\":")
            w.string(e.request.deviceToken)
            w.raw(",\"method\":")
            w.string(e.request.method)
            w.raw(",\"path\":")
            w.string(e.request.path)
            w.raw(",\"headers\":{")
            for (k, h) in ([Self.redactedAuthorization] + e.request.headers).enumerated() {
                if k > 0 { w.byte(UInt8(ascii: ",")) }
                w.string(h.name)
                w.byte(UInt8(ascii: ":"))
                w.string(h.value)
            }
            // The body is our own JSON, embedded as a value rather than a string.
            w.raw("},\"body\":")
            for b in e.request.body { w.byte(b) }
            w.raw(",\"size\":")
            w.int(e.request.body.count)
            w.raw(",\"limit\":")
            w.int(plan.payloadLimit)
            w.raw(",\"truncated\":")
            w.bool(e.truncated)
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("]}")
        return w.bytes
    }

    /// Every problem, one per line: `path: message [code]`.
    public static func text(for rejection: CampaignRejection) -> String {
        var out = "campaign invalid: \(count(rejection.problems.count, "problem"))\n"
        for p in rejection.problems { out += p.description + "\n" }
        return out
    }

    public static func json(for rejection: CampaignRejection) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"valid\":false,\"problems\":[")
        for (i, p) in rejection.problems.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"code\":")
            w.string(p.stableCode)
            w.raw(",\"path\":")
            w.string(p.path.description)
            w.raw(",\"pointer\":")
            w.string(p.path.pointer)
            w.raw(",\"message\":")
            w.string(p.message)
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("]}")
        return w.bytes
    }

    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}
