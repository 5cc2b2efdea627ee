import DeepLinks
import StrictJSON

/// Turns a campaign document into a `Campaign`, checking the shape of every field and
/// reporting every problem at once. Rules that depend on several fields (and on the
/// template's defaults) are checked later by `CampaignPlanner`.
public enum CampaignReader {
    static let knownKeys: [String] = [
        "template", "locale", "variables", "alert", "deeplink", "push_type", "priority", "expiration",
        "collapse_id", "thread_id", "category", "badge", "sound", "interruption_level", "relevance_score",
        "mutable_content", "content_available", "target_content_id", "data", "devices", "truncate", "dry_run",
        "send_at", "expires_at", "confirm_devices", "app", "environment",
    ]
    static let alertKeys: [String] = [
        "title", "subtitle", "body", "title-loc-key", "title-loc-args", "subtitle-loc-key",
        "subtitle-loc-args", "loc-key", "loc-args", "launch-image",
    ]
    static let reservedDataKeys: Set<String> = ["aps", "deeplink", "route"]
    /// APNs limit on `apns-collapse-id`.
    public static let maxCollapseIdBytes = 64

    /// Parses and reads campaign JSON.
    public static func read(jsonBytes: [UInt8]) -> Result<Campaign, CampaignRejection> {
        let (campaign, problems) = readAll(jsonBytes: jsonBytes)
        guard let campaign, problems.isEmpty else { return .failure(CampaignRejection(problems: problems)) }
        return .success(campaign)
    }

    public static func read(_ json: JSON) -> Result<Campaign, CampaignRejection> {
        let (campaign, problems) = readAll(json)
        guard let campaign, problems.isEmpty else { return .failure(CampaignRejection(problems: problems)) }
        return .success(campaign)
    }

    /// The campaign with every invalid field left out, and the problems found. The
    /// planner goes on checking what it can, so that all problems are reported together.
    /// The campaign is nil only when the document is not a JSON object.
    static func readAll(jsonBytes: [UInt8]) -> (Campaign?, [PayloadError]) {
        do {
            return readAll(try JSONParser().parse(jsonBytes))
        } catch {
            return (nil, [PayloadError(.invalidJSON, at: error.path,
                                       "line \(error.line), column \(error.column): \(error.message) [\(error.code.rawValue)]")])
        }
    }

    static func readAll(_ json: JSON) -> (Campaign?, [PayloadError]) {
        guard case .object(let object) = json else {
            return (nil, [PayloadError(.wrongType, at: .root, "a campaign is a JSON object, found \(json.kindDescription)")])
        }
        var r = FieldReader(object, at: .root)
        r.rejectUnknownKeys(knownKeys)
        var c = Campaign()

        let templateName = r.string("template")
        if let name = templateName, !TemplateName.isValid(name) {
            r.problem(.invalidValue, "template", "\(TextSafety.quoted(name)) is not a template name: use letters, digits, '_' and '-' (at most 64)")
        }
        let locale = r.string("locale")
        if let l = locale, !LanguageTag.isValid(l) {
            r.problem(.invalidValue, "locale", "\(TextSafety.quoted(l)) is not a language tag like \"en\" or \"pl-PL\"")
        }
        if let v = object["variables"] {
            c.variables = FieldReader.variables(v, at: .root.appending("variables"), problems: &r.problems)
        }
        let alert = readAlert(&r)
        if let name = templateName {
            if alert != nil { r.problem(.conflictingFields, "alert", "give either \"template\" or \"alert\", not both") }
            c.message = .template(name: name, locale: locale)
        } else {
            if let alert { c.message = .inline(alert) }
            if locale != nil { r.problem(.conflictingFields, "locale", "\"locale\" chooses a template's language; this campaign has no \"template\"") }
            if object["variables"] != nil { r.problem(.conflictingFields, "variables", "\"variables\" fill a template's placeholders; this campaign has no \"template\"") }
        }

        c.deeplink = r.string("deeplink")
        if let t = r.string("push_type") {
            if let p = PushType(rawValue: t) { c.pushType = p } else {
                r.problem(.invalidValue, "push_type", "unknown push type \(TextSafety.quoted(t)); expected one of: \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let p = r.integer("priority") {
            if [10, 5, 1].contains(p) { c.priority = Int(p) } else {
                r.problem(.invalidPriority, "priority", "APNs priority is 10 (now), 5 (power-considerate) or 1 (low), found \(p)")
            }
        }
        readExpiration(&r, into: &c)
        if let id = r.plainString("collapse_id") {
            if id.utf8.count > maxCollapseIdBytes {
                r.problem(.collapseIdTooLong, "collapse_id", "is \(id.utf8.count) bytes; APNs allows at most \(maxCollapseIdBytes)")
            } else { c.collapseId = id }
        }
        c.threadId = r.plainString("thread_id")
        c.category = r.plainString("category")
        if let b = r.integer("badge") {
            if b >= 0 && b <= Int64(Int32.max) { c.badge = Int(b) } else {
                r.problem(.invalidValue, "badge", "must be from 0 (clears the badge) to \(Int32.max), found \(b)")
            }
        }
        c.sound = readSound(&r)
        if let level = r.string("interruption_level") {
            if let l = InterruptionLevel(rawValue: level) { c.interruptionLevel = l } else {
                r.problem(.invalidValue, "interruption_level", "unknown level \(TextSafety.quoted(level)); expected one of: \(InterruptionLevel.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        c.relevanceScore = r.unitInterval("relevance_score", code: .relevanceScoreOutOfRange)
        c.mutableContent = r.flag("mutable_content")
        c.contentAvailable = r.flag("content_available")
        c.targetContentId = r.plainString("target_content_id")
        if let data = r.object("data") {
            for member in data.members where reservedDataKeys.contains(member.key) {
                r.problems.append(PayloadError(.reservedDataKey, at: .root.appending("data").appending(member.key),
                                               "\(TextSafety.quoted(member.key)) is reserved: the body's \"aps\", \"deeplink\" and \"route\" are written by pushgate"))
            }
            NumberSafety.check(.object(data), at: .root.appending("data"), problems: &r.problems)
            c.data = data
        }
        if let devices = object["devices"] {
            c.devicesGiven = true
            let (valid, indices) = readDevices(devices, hasTemplate: templateName != nil, problems: &r.problems)
            c.devices = valid
            c.deviceIndices = indices  // after `devices`, whose didSet resets it
        }
        c.truncate = r.bool("truncate") ?? false
        c.dryRun = r.bool("dry_run") ?? false
        c.sendAt = readTime(&r, "send_at")
        c.expiresAt = readTime(&r, "expires_at")
        c.app = r.plainString("app")
        if let environment = r.plainString("environment") {
            if ["production", "sandbox"].contains(environment) { c.environment = environment } else {
                r.problem(.invalidValue, "environment", "expected \"production\" or \"sandbox\", not \(FieldReader.shown(.string(environment)))")
            }
        }
        if let value = object["confirm_devices"] {
            if let n = value.int64Value, n >= 1, n <= Int64(Int32.max) { c.confirmDevices = Int(n) } else if case .number = value {
                r.problem(.invalidValue, "confirm_devices", "expected the campaign's device count, a whole number ≥ 1, found \(FieldReader.shown(value))")
            } else {
                r.wrongType("confirm_devices", value, expected: "the campaign's device count (a whole number)")
            }
        }

        return (c, r.problems)
    }

    static func readAlert(_ r: inout FieldReader) -> InlineAlert? {
        guard let value = r.object["alert"] else { return nil }
        if case .string(let body) = value { return InlineAlert(body: body) }
        guard case .object(let o) = value else {
            r.wrongType("alert", value, expected: "an object (or a string for the body)")
            return nil
        }
        var a = FieldReader(o, at: .root.appending("alert"))
        a.rejectUnknownKeys(alertKeys)
        var alert = InlineAlert()
        alert.title = a.string("title")
        alert.subtitle = a.string("subtitle")
        alert.body = a.string("body")
        alert.titleLocKey = a.plainString("title-loc-key")
        alert.titleLocArgs = a.stringArray("title-loc-args")
        alert.subtitleLocKey = a.plainString("subtitle-loc-key")
        alert.subtitleLocArgs = a.stringArray("subtitle-loc-args")
        alert.locKey = a.plainString("loc-key")
        alert.locArgs = a.stringArray("loc-args")
        alert.launchImage = a.plainString("launch-image")
        let pairs: [(String, String?, [String]?)] = [
            ("loc-args", alert.locKey, alert.locArgs),
            ("title-loc-args", alert.titleLocKey, alert.titleLocArgs),
            ("subtitle-loc-args", alert.subtitleLocKey, alert.subtitleLocArgs),
        ]
        for (argsKey, key, args) in pairs where args != nil && key == nil {
            a.problem(.missing, String(argsKey.dropLast(4)) + "key", "\"\(argsKey)\" needs \"\(argsKey.dropLast(4))key\"")
        }
        if a.problems.isEmpty && o.isEmpty {
            a.problems.append(PayloadError(.missing, at: .root.appending("alert").appending("body"),
                                           "missing: an alert needs at least a body, a title or a loc-key"))
        }
        r.problems += a.problems
        return alert
    }

    static func readExpiration(_ r: inout FieldReader, into c: inout Campaign) {
        guard let value = r.object["expiration"] else { return }
        switch value {
        case .number:
            guard let n = value.int64Value, n >= 0 else {
                r.problem(.invalidExpiration, "expiration", "expected UNIX seconds (a whole number ≥ 0) or an RFC 3339 timestamp, found \(FieldReader.shown(value))")
                return
            }
            c.expiration = n
        case .string(let s):
            switch Expiration.parseRFC3339(s) {
            case .success(let n) where n >= 0: c.expiration = n
            case .success: r.problem(.invalidExpiration, "expiration", "is before 1970")
            case .failure(let why): r.problem(.invalidExpiration, "expiration", why.message)
            }
        default:
            r.wrongType("expiration", value, expected: "UNIX seconds or an RFC 3339 string")
        }
    }

    /// `send_at` and `expires_at`: an RFC 3339 time with its zone (`Z` or an offset), as
    /// UNIX seconds. Whether it is in the future is the outbox's rule (it has the clock).
    static func readTime(_ r: inout FieldReader, _ key: String) -> Int64? {
        guard let value = r.object[key] else { return nil }
        guard case .string(let text) = value else {
            r.wrongType(key, value, expected: "an RFC 3339 time like 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00")
            return nil
        }
        switch Expiration.parseRFC3339(text) {
        case .success(let seconds) where seconds >= 0: return seconds
        case .success: r.problem(.invalidValue, key, "is before 1970")
        case .failure(let why): r.problem(.invalidValue, key, why.message)
        }
        return nil
    }

    static func readSound(_ r: inout FieldReader) -> Sound? {
        guard let value = r.object["sound"] else { return nil }
        switch value {
        case .string:
            return r.plainString("sound").map(Sound.named)
        case .object(let o):
            var s = FieldReader(o, at: r.path.appending("sound"))
            s.rejectUnknownKeys(["critical", "name", "volume"])
            let critical = s.flag("critical")
            let name = s.plainString("name")
            let volume = s.unitInterval("volume", code: .invalidValue)
            if !o.members.contains(where: { $0.key == "name" }) { s.problem(.missing, "name", "missing: the sound file name (or \"default\")") }
            r.problems += s.problems
            guard s.problems.isEmpty, let name else { return nil }
            return .critical(critical: critical ?? false, name: name, volume: volume)
        default:
            r.wrongType("sound", value, expected: "a sound name or a {critical, name, volume} object")
            return nil
        }
    }

    /// The valid devices, and where each sits in the document's list.
    static func readDevices(_ value: JSON, hasTemplate: Bool, problems: inout [PayloadError]) -> ([Device], [Int]) {
        let path = JSONPath.root.appending("devices")
        guard case .array(let items) = value else {
            problems.append(PayloadError(.wrongType, at: path, "expected an array of device tokens, found \(value.kindDescription)"))
            return ([], [])
        }
        var devices: [Device] = []
        var indices: [Int] = []
        devices.reserveCapacity(items.count)
        var firstIndex: [String: Int] = [:]
        for (i, item) in items.enumerated() {
            let here = path.appending(index: i)
            var tokenText: String?
            var variables: [NamedValue] = []
            switch item {
            case .string(let s):
                tokenText = s
            case .object(let o):
                var d = FieldReader(o, at: here)
                d.rejectUnknownKeys(["token", "variables"])
                tokenText = d.string("token")
                if !d.has("token") { d.problem(.missing, "token", "missing: the device token") }
                if let v = o["variables"] {
                    if hasTemplate {
                        variables = FieldReader.variables(v, at: here.appending("variables"), problems: &d.problems)
                    } else {
                        d.problem(.conflictingFields, "variables", "\"variables\" fill a template's placeholders; this campaign has no \"template\"")
                    }
                }
                problems += d.problems
            default:
                problems.append(PayloadError(.wrongType, at: here, "expected a token string or a {token, variables} object, found \(item.kindDescription)"))
            }
            guard let text = tokenText else { continue }
            let tokenPath = item.objectValue == nil ? here : here.appending("token")
            switch DeviceToken.normalize(text) {
            case .failure(let why):
                problems.append(PayloadError(.invalidToken, at: tokenPath, why.message))
            case .success(let token):
                if let first = firstIndex[token] {
                    problems.append(PayloadError(.duplicateDevice, at: tokenPath, "the same token as devices[\(first)]"))
                } else {
                    firstIndex[token] = i
                    devices.append(Device(token: token, variables: variables))
                    indices.append(i)
                }
            }
        }
        return (devices, indices)
    }
}
