import APNsCore
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
        "send_at", "expires_at", "confirm_devices", "app", "environment", "lane", "rate_per_second",
        "live_activity", "mdm", "channel",
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
        var r = ConfigReader(document: nil)
        let root = JSONPath.root
        r.rejectUnknownKeys(object, at: root, keys: knownKeys)
        var c = Campaign()

        // An invalid name or tag is reported and still read, so the rules below see it given.
        let templateName = r.string(object, "template", at: root)?.value
        if let name = templateName, !TemplateName.isValid(name) {
            r.problem(.invalidValue, at: root.appending("template"), "\(TextSafety.quoted(name)) is not a template name: use letters, digits, '_' and '-' (at most 64)")
        }
        let locale = r.string(object, "locale", at: root)?.value
        if let l = locale, !LanguageTag.isValid(l) {
            r.problem(.invalidValue, at: root.appending("locale"), "\(TextSafety.quoted(l)) is not a language tag like \"en\" or \"pl-PL\"")
        }
        if let v = object["variables"] {
            c.variables = r.variables(v, at: root.appending("variables"))
        }
        let alert = readAlert(object, &r)
        if let name = templateName {
            if alert != nil { r.problem(.conflictingFields, at: root.appending("alert"), "give either \"template\" or \"alert\", not both") }
            c.message = .template(name: name, locale: locale)
        } else {
            if let alert { c.message = .inline(alert) }
            if locale != nil { r.problem(.conflictingFields, at: root.appending("locale"), "\"locale\" chooses a template's language; this campaign has no \"template\"") }
            if object["variables"] != nil { r.problem(.conflictingFields, at: root.appending("variables"), "\"variables\" fill a template's placeholders; this campaign has no \"template\"") }
        }

        c.deeplink = r.string(object, "deeplink", at: root)?.value
        if let t = r.string(object, "push_type", at: root)?.value {
            if let p = PushType(rawValue: t) { c.pushType = p } else {
                r.problem(.invalidValue, at: root.appending("push_type"), "unknown push type \(TextSafety.quoted(t)); expected one of: \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let p = r.wholeNumber(object, "priority", at: root) {
            if [10, 5, 1].contains(p) { c.priority = Int(p) } else {
                r.problem(.invalidPriority, at: root.appending("priority"), "APNs priority is 10 (now), 5 (power-considerate) or 1 (low), found \(p)")
            }
        }
        readExpiration(object, &r, into: &c)
        if let id = r.plainString(object, "collapse_id", at: root) {
            if id.utf8.count > maxCollapseIdBytes {
                r.problem(.collapseIdTooLong, at: root.appending("collapse_id"), "is \(id.utf8.count) bytes; APNs allows at most \(maxCollapseIdBytes)")
            } else if let edge = [id.unicodeScalars.first, id.unicodeScalars.last].compactMap({ $0 }).first(where: TextSafety.isWhitespace) {
                // An HTTP field value has no whitespace at its ends: libcurl drops or trims
                // it, and the preview would show an apns-collapse-id APNs never gets.
                r.problem(.invalidValue, at: root.appending("collapse_id"),
                          "starts or ends with whitespace (\(TextSafety.quoted(edge))), which an HTTP header value cannot carry; APNs would not get it as written")
            } else { c.collapseId = id }
        }
        c.threadId = r.plainString(object, "thread_id", at: root)
        c.category = r.plainString(object, "category", at: root)
        if let b = r.wholeNumber(object, "badge", at: root) {
            if b >= 0 && b <= Int64(Int32.max) { c.badge = Int(b) } else {
                r.problem(.invalidValue, at: root.appending("badge"), "must be from 0 (clears the badge) to \(Int32.max), found \(b)")
            }
        }
        c.sound = readSound(object, at: root, &r)
        if let level = r.string(object, "interruption_level", at: root)?.value {
            if let l = InterruptionLevel(rawValue: level) { c.interruptionLevel = l } else {
                r.problem(.invalidValue, at: root.appending("interruption_level"), "unknown level \(TextSafety.quoted(level)); expected one of: \(InterruptionLevel.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        c.relevanceScore = r.unitInterval(object, "relevance_score", at: root, code: .relevanceScoreOutOfRange)
        c.mutableContent = r.flag(object, "mutable_content", at: root)
        c.contentAvailable = r.flag(object, "content_available", at: root)
        c.targetContentId = r.plainString(object, "target_content_id", at: root)
        if let data = r.object(object, "data", at: root) {
            for member in data.members where reservedDataKeys.contains(member.key) {
                r.problem(.reservedDataKey, at: root.appending("data").appending(member.key),
                          "\(TextSafety.quoted(member.key)) is reserved: the body's \"aps\", \"deeplink\" and \"route\" are written by pushgate")
            }
            NumberSafety.check(.object(data), at: root.appending("data"), reader: &r)
            c.data = data
        }
        if let magic = r.plainString(object, "mdm", at: root) {
            switch TemplateText.parse(magic) {
            case .success(let text): c.mdm = text
            case .failure(let why): r.problem(.invalidValue, at: root.appending("mdm"), why.message)
            }
        }
        if let devices = object["devices"] {
            c.devicesGiven = true
            // Device variables fill a template's placeholders, or the PushMagic's.
            let (valid, indices) = readDevices(devices, hasTemplate: templateName != nil || object["mdm"] != nil, &r)
            c.devices = valid
            c.deviceIndices = indices  // after `devices`, whose didSet resets it
        }
        if let channel = r.plainString(object, "channel", at: root) {
            if let why = BroadcastChannelID.problem(with: channel) {
                r.problem(.invalidChannelId, at: root.appending("channel"), why)
            }
            c.channel = channel  // read even when invalid, so the rules below see a channel campaign
            if object["devices"] != nil {
                r.problem(.conflictingFields, at: root.appending("devices"),
                          "give either \"channel\" (one broadcast to every activity subscribed to it) or \"devices\", not both")
            }
        }
        c.truncate = r.bool(object, "truncate", at: root, default: false)
        c.dryRun = r.bool(object, "dry_run", at: root, default: false)
        c.sendAt = readTime(object, "send_at", &r)
        c.expiresAt = readTime(object, "expires_at", &r)
        c.app = r.plainString(object, "app", at: root)
        if let environment = r.plainString(object, "environment", at: root) {
            if ["production", "sandbox"].contains(environment) { c.environment = environment } else {
                r.problem(.invalidValue, at: root.appending("environment"), "expected \"production\" or \"sandbox\", not \(ConfigReader.shown(.string(environment)))")
            }
        }
        if let lane = r.string(object, "lane", at: root)?.value {
            if let l = CampaignLane(rawValue: lane) { c.lane = l } else {
                r.problem(.invalidValue, at: root.appending("lane"), "unknown lane \(TextSafety.quoted(lane)); expected one of: \(CampaignLane.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let value = object["rate_per_second"] {
            if case .number = value, let rate = value.doubleValue {
                if rate >= Campaign.minRatePerSecond && rate <= Campaign.maxRatePerSecond { c.ratePerSecond = rate } else {
                    r.problem(.invalidValue, at: root.appending("rate_per_second"), "expected devices per second, at least \(Campaign.minRatePerSecond) and at most \(Int(Campaign.maxRatePerSecond)), found \(ConfigReader.shown(value))")
                }
            } else {
                r.wrongType(value, at: root.appending("rate_per_second"), expected: "devices per second (a number)")
            }
        }
        if let value = object["live_activity"] {
            c.liveActivity = LiveActivity.read(value, &r)
        }
        if let value = object["confirm_devices"] {
            if let n = value.int64Value, n >= 1, n <= Int64(Int32.max) { c.confirmDevices = Int(n) } else if case .number = value {
                r.problem(.invalidValue, at: root.appending("confirm_devices"), "expected the campaign's device count, a whole number ≥ 1, found \(ConfigReader.shown(value))")
            } else {
                r.wrongType(value, at: root.appending("confirm_devices"), expected: "the campaign's device count (a whole number)")
            }
        }

        return (c, r.payloadErrors)
    }

    static func readAlert(_ object: JSONObject, _ r: inout ConfigReader) -> InlineAlert? {
        guard let value = object["alert"] else { return nil }
        if case .string(let body) = value { return InlineAlert(body: body) }
        let path = JSONPath.root.appending("alert")
        guard case .object(let o) = value else {
            r.wrongType(value, at: path, expected: "an object (or a string for the body)")
            return nil
        }
        let before = r.diagnostics.count
        r.rejectUnknownKeys(o, at: path, keys: alertKeys)
        var alert = InlineAlert()
        alert.title = r.string(o, "title", at: path)?.value
        alert.subtitle = r.string(o, "subtitle", at: path)?.value
        alert.body = r.string(o, "body", at: path)?.value
        alert.titleLocKey = r.plainString(o, "title-loc-key", at: path)
        alert.titleLocArgs = r.strings(o, "title-loc-args", at: path)
        alert.subtitleLocKey = r.plainString(o, "subtitle-loc-key", at: path)
        alert.subtitleLocArgs = r.strings(o, "subtitle-loc-args", at: path)
        alert.locKey = r.plainString(o, "loc-key", at: path)
        alert.locArgs = r.strings(o, "loc-args", at: path)
        alert.launchImage = r.plainString(o, "launch-image", at: path)
        let pairs: [(String, String?, [String]?)] = [
            ("loc-args", alert.locKey, alert.locArgs),
            ("title-loc-args", alert.titleLocKey, alert.titleLocArgs),
            ("subtitle-loc-args", alert.subtitleLocKey, alert.subtitleLocArgs),
        ]
        for (argsKey, key, args) in pairs where args != nil && key == nil {
            r.problem(.missing, at: path.appending(String(argsKey.dropLast(4)) + "key"), "\"\(argsKey)\" needs \"\(argsKey.dropLast(4))key\"")
        }
        if r.diagnostics.count == before && o.isEmpty {
            r.problem(.missing, at: path.appending("body"), "missing: an alert needs at least a body, a title or a loc-key")
        }
        return alert
    }

    static func readExpiration(_ object: JSONObject, _ r: inout ConfigReader, into c: inout Campaign) {
        guard let value = object["expiration"] else { return }
        let path = JSONPath.root.appending("expiration")
        switch value {
        case .number:
            guard let n = value.int64Value, n >= 0 else {
                r.problem(.invalidExpiration, at: path, "expected UNIX seconds (a whole number ≥ 0) or an RFC 3339 timestamp, found \(ConfigReader.shown(value))")
                return
            }
            c.expiration = n
        case .string(let s):
            switch Expiration.parseRFC3339(s) {
            case .success(let n) where n >= 0: c.expiration = n
            case .success: r.problem(.invalidExpiration, at: path, "is before 1970")
            case .failure(let why): r.problem(.invalidExpiration, at: path, why.message)
            }
        default:
            r.wrongType(value, at: path, expected: "UNIX seconds or an RFC 3339 string")
        }
    }

    /// `send_at` and `expires_at`: an RFC 3339 time with its zone (`Z` or an offset), as
    /// UNIX seconds. Whether it is in the future is the outbox's rule (it has the clock).
    static func readTime(_ object: JSONObject, _ key: String, _ r: inout ConfigReader) -> Int64? {
        guard let value = object[key] else { return nil }
        let path = JSONPath.root.appending(key)
        guard case .string(let text) = value else {
            r.wrongType(value, at: path, expected: "an RFC 3339 time like 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00")
            return nil
        }
        switch Expiration.parseRFC3339(text) {
        case .success(let seconds) where seconds >= 0: return seconds
        case .success: r.problem(.invalidValue, at: path, "is before 1970")
        case .failure(let why): r.problem(.invalidValue, at: path, why.message)
        }
        return nil
    }

    /// `sound` in `object` (at `section`): a name or a `{critical, name, volume}` object.
    static func readSound(_ object: JSONObject, at section: JSONPath, _ r: inout ConfigReader) -> Sound? {
        guard let value = object["sound"] else { return nil }
        switch value {
        case .string:
            return r.plainString(object, "sound", at: section).map(Sound.named)
        case .object(let o):
            let path = section.appending("sound")
            let before = r.diagnostics.count
            r.rejectUnknownKeys(o, at: path, keys: ["critical", "name", "volume"])
            let critical = r.flag(o, "critical", at: path)
            let name = r.plainString(o, "name", at: path)
            let volume = r.unitInterval(o, "volume", at: path, code: .invalidValue)
            if o["name"] == nil { r.problem(.missing, at: path.appending("name"), "missing: the sound file name (or \"default\")") }
            guard r.diagnostics.count == before, let name else { return nil }
            return .critical(critical: critical ?? false, name: name, volume: volume)
        default:
            r.wrongType(value, at: section.appending("sound"), expected: "a sound name or a {critical, name, volume} object")
            return nil
        }
    }

    /// The valid devices, and where each sits in the document's list.
    static func readDevices(_ value: JSON, hasTemplate: Bool, _ r: inout ConfigReader) -> ([Device], [Int]) {
        let path = JSONPath.root.appending("devices")
        guard case .array(let items) = value else {
            r.wrongType(value, at: path, expected: "an array of device tokens")
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
                r.rejectUnknownKeys(o, at: here, keys: ["token", "variables"])
                tokenText = r.string(o, "token", at: here)?.value
                if o["token"] == nil { r.problem(.missing, at: here.appending("token"), "missing: the device token") }
                if let v = o["variables"] {
                    if hasTemplate {
                        variables = r.variables(v, at: here.appending("variables"))
                    } else {
                        r.problem(.conflictingFields, at: here.appending("variables"), "\"variables\" fill a template's placeholders; this campaign has no \"template\"")
                    }
                }
            default:
                r.wrongType(item, at: here, expected: "a token string or a {token, variables} object")
            }
            guard let text = tokenText else { continue }
            let tokenPath = item.objectValue == nil ? here : here.appending("token")
            switch DeviceToken.normalize(text) {
            case .failure(let why):
                r.problem(.invalidToken, at: tokenPath, why.message)
            case .success(let token):
                if let first = firstIndex[token] {
                    r.problem(.duplicateDevice, at: tokenPath, "the same token as devices[\(first)]")
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
