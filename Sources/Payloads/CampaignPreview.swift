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
        w.object { w in
            w.member("valid", true)
            w.member("push_type", plan.pushType.rawValue)
            w.member("topic", plan.topic)
            w.member("priority", plan.priority)
            w.member("template", orNull: plan.template?.name)
            w.member("device_count", plan.devices.count)
            w.member("shown", entries.count)
            w.member("requests", array: { w in
                for e in entries {
                    w.object { w in
                        w.member("device", e.request.deviceToken)
                        w.member("method", e.request.method)
                        w.member("path", e.request.path)
                        w.member("headers", object: { w in
                            for h in [Self.redactedAuthorization] + e.request.headers {
                                w.key(h.name)
                                w.string(h.value)
                            }
                        })
                        // The body is our own JSON, embedded as a value rather than a string.
                        w.key("body")
                        w.serialized(e.request.body)
                        w.member("size", e.request.body.count)
                        w.member("limit", plan.payloadLimit)
                        w.member("truncated", e.truncated)
                    }
                }
            })
        }
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
        w.object { w in
            w.member("valid", false)
            w.member("problems", array: { w in
                for p in rejection.problems {
                    w.object { w in
                        w.member("code", p.stableCode)
                        w.member("path", p.path.description)
                        w.member("pointer", p.path.pointer)
                        w.member("message", p.message)
                    }
                }
            })
        }
        return w.bytes
    }

    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}
