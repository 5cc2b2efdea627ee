import APNsCore
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
        /// The alert's title, subtitle and body as sent, where each came from, and how
        /// iOS would lay it out; empty when the push has no alert text.
        public var texts: [ShownText]
        public var warnings: [PreviewWarning]
    }

    /// One alert text: exactly as in the body, its source, and its lines on screen.
    public struct ShownText: Sendable {
        public var field: NotificationDisplay.Field
        public var text: String
        /// A locale tag of the template, its `default_locale` for the default strings (or
        /// `default` when the template does not name their language), or `campaign` (an
        /// inline alert).
        public var source: String
        /// The text is the template's default strings.
        public var fromDefaultStrings: Bool
        public var layout: NotificationDisplay.Layout
    }

    public static let defaultSource = "default"
    public static let campaignSource = "campaign"

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
            let texts = Self.shownTexts(plan: plan, body: body.bytes)
            entries.append(Entry(request: request, truncated: body.truncated, link: plan.link(for: device), texts: texts,
                                 warnings: PreviewWarning.warnings(plan: plan, texts: texts, bodyShortened: body.truncated)))
        }
        self.entries = entries
    }

    /// The locale the campaign asks for, if it names a template and one.
    public var requestedLocale: String? {
        if case .template(_, let locale) = plan.campaign.message { return locale }
        return nil
    }

    /// Reads the texts back from the body (our own JSON), so what is shown is what is sent.
    static func shownTexts(plan: CampaignPlan, body: [UInt8]) -> [ShownText] {
        guard let json = try? JSONParser().parse(body), let aps = json.objectValue?["aps"]?.objectValue,
              let alert = aps["alert"]?.objectValue else { return [] }
        var sources = Template.Sources()
        if let template = plan.template, case .template(_, let locale) = plan.campaign.message {
            sources = template.resolved(for: locale).sources
        }
        var out: [ShownText] = []
        for field in NotificationDisplay.Field.allCases {
            guard let text = alert[field.rawValue]?.stringValue else { continue }
            let source: String?
            switch field {
            case .title: source = sources.title
            case .subtitle: source = sources.subtitle
            case .body: source = sources.body
            }
            let fromDefault = plan.template != nil && source == nil
            out.append(ShownText(field: field, text: text,
                                 source: plan.template == nil ? campaignSource : source ?? plan.template?.defaultLocale ?? defaultSource,
                                 fromDefaultStrings: fromDefault, layout: NotificationDisplay.layout(text, as: field)))
        }
        return out
    }

    /// The header the delivery layer adds, shown without its secret.
    public static let redactedAuthorization = HTTPHeader("authorization", "bearer <redacted>")

    public var text: String {
        let audience = plan.channel.map { "channel \(TextSafety.escapedForDisplay($0)) (one broadcast)" } ?? Self.count(plan.devices.count, "device")
        var out = "campaign ok: \(audience), push type \(plan.pushType.rawValue), topic \(plan.topic), priority \(plan.priority)\n"
        if let t = plan.template {
            out += "template \(t.name)"
            if case .template(_, let locale?) = plan.campaign.message { out += ", locale \(locale)" }
            out += "\n"
        }
        for (i, e) in entries.enumerated() {
            out += plan.channel != nil ? "\nbroadcast\n" : "\ndevice \(i + 1) of \(plan.devices.count)\n"
            if let link = e.link { out += "deeplink \(TextSafety.escapedForDisplay(link.canonical)) → route \(link.route)\n" }
            out += "\(e.request.method) \(e.request.path)\n"
            for h in [Self.redactedAuthorization] + e.request.headers {
                out += "\(h.name): \(TextSafety.escapedForDisplay(h.value))\n"
            }
            out += "\n" + String(decoding: e.request.body, as: UTF8.self) + "\n\n"
            out += "size: \(e.request.body.count) of \(plan.payloadLimit) bytes"
            out += e.truncated ? " (alert body shortened to fit)\n" : "\n"
            for warning in e.warnings where warning.code != .bodyShortened {
                out += "warning: \(warning.message) [\(warning.code.rawValue)]\n"
            }
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
            if let channel = plan.channel { w.member("channel", channel) }
            w.member("shown", entries.count)
            w.member("requests", array: { w in
                for (index, e) in entries.enumerated() {
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
                        // The same bytes as text, for showing and copying them exactly.
                        w.member("body_text", String(decoding: e.request.body, as: UTF8.self))
                        w.member("size", e.request.body.count)
                        w.member("limit", plan.payloadLimit)
                        w.member("truncated", e.truncated)
                        w.key("link")
                        if let link = e.link { LinkResultJSON.write(.accepted(link), to: &w) } else { w.null() }
                        writeAlert(e, to: &w)
                        w.member("warnings", array: { w in
                            for warning in e.warnings { warning.write(to: &w) }
                        })
                        w.key("simulator")
                        writeSimulatorFile(e, index: index, to: &w)
                    }
                }
            })
        }
        return w.bytes
    }

    /// `{"locale": …, "places": […], "title": {…}, "subtitle": …, "body": …}`, or null
    /// for a push without alert text.
    private func writeAlert(_ e: Entry, to w: inout JSONWriter) {
        w.key("alert")
        guard !e.texts.isEmpty else { w.null(); return }
        w.object { w in
            w.member("locale", orNull: requestedLocale)
            w.member("places", array: { w in
                for place in NotificationDisplay.places { w.string(place) }
            })
            for field in NotificationDisplay.Field.allCases {
                w.key(field.rawValue)
                guard let shown = e.texts.first(where: { $0.field == field }) else { w.null(); continue }
                w.object { w in
                    w.member("text", shown.text)
                    w.member("source", shown.source)
                    w.member("lines", array: { w in
                        for line in shown.layout.lines { w.string(line) }
                    })
                    w.member("total_lines", shown.layout.totalLines)
                    w.member("max_lines", shown.layout.maxLines)
                    w.member("cut", shown.layout.truncated)
                }
            }
        }
    }

    /// The `.apns` file for the Simulator, or null when the Simulator does not take the push type.
    private func writeSimulatorFile(_ e: Entry, index: Int, to w: inout JSONWriter) {
        guard SimulatorPayload.accepts(plan.pushType) else { w.null(); return }
        let bytes = SimulatorPayload.fileBytes(body: e.request.body, bundle: plan.topic)
        w.object { w in
            w.member("file_name", SimulatorPayload.fileName(index: index, token: e.request.deviceToken, locale: requestedLocale))
            w.member("contents", String(decoding: bytes, as: UTF8.self))
            w.member("size", bytes.count)
            w.member("limit", SimulatorPayload.maxFileBytes)
        }
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
