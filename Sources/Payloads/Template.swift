import StrictJSON

/// A notification template (`Templates/<name>.json`): text in a default language with
/// per-locale variants, defaults for APNs fields, and optionally a deep-link pattern.
///
/// ```json
/// {
///   "description": "…",
///   "defaults": {"push_type": "alert", "sound": "default", "category": "ORDER_READY",
///                "thread_id": "orders", "interruption_level": "time-sensitive"},
///   "deeplink": "https://example.com/order/{{order_id}}",
///   "strings": {"title": "…", "subtitle": "…", "body": "Order {{order_id}} is ready"},
///   "locales": {"pl": {"body": "…"}, "pl-PL": {"title": "…"}}
/// }
/// ```
/// A locale variant may give any subset of title/subtitle/body; what it leaves out comes
/// from the next fallback (`pl-PL` → `pl` → `strings`).
public struct Template: Sendable, Equatable {
    public struct Strings: Sendable, Equatable {
        public var title: TemplateText?
        public var subtitle: TemplateText?
        public var body: TemplateText?
    }

    /// APNs fields a campaign inherits unless it sets them itself.
    public struct Defaults: Sendable, Equatable {
        public var pushType: PushType?
        public var sound: Sound?
        public var category: String?
        public var threadId: String?
        public var interruptionLevel: InterruptionLevel?
    }

    public var name: String
    public var description: String?
    public var defaults = Defaults()
    public var deeplink: LinkPattern?
    public var strings: Strings
    /// Keyed by lowercased locale tag.
    public var locales: [String: Strings]

    static let knownKeys = ["description", "defaults", "deeplink", "strings", "locales"]
    static let defaultKeys = ["push_type", "sound", "category", "thread_id", "interruption_level"]
    static let stringKeys = ["title", "subtitle", "body"]

    /// Title, subtitle and body for `locale`, each from the most specific variant that
    /// has it. Matching ignores case (`pl-pl` finds `pl-PL`).
    public func strings(for locale: String?) -> Strings {
        var chain: [Strings] = []
        if let locale {
            for tag in LanguageTag.fallbackChain(locale.lowercased()) {
                if let s = locales[tag] { chain.append(s) }
            }
        }
        chain.append(strings)
        return Strings(title: chain.lazy.compactMap(\.title).first,
                       subtitle: chain.lazy.compactMap(\.subtitle).first,
                       body: chain.lazy.compactMap(\.body).first)
    }

    /// Reads a template file's bytes. Problems carry paths inside the template document.
    public static func parse(jsonBytes: [UInt8], name: String) -> Result<Template, CampaignRejection> {
        let json: JSON
        do { json = try JSONParser().parse(jsonBytes) } catch {
            return .failure(CampaignRejection(problems: [PayloadError(.invalidJSON, at: error.path,
                "line \(error.line), column \(error.column): \(error.message) [\(error.code.rawValue)]")]))
        }
        guard case .object(let object) = json else {
            return .failure(CampaignRejection(problems: [PayloadError(.wrongType, at: .root, "a template is a JSON object, found \(json.kindDescription)")]))
        }
        var r = FieldReader(object, at: .root)
        r.rejectUnknownKeys(knownKeys)
        let description = r.string("description")
        var defaults = Defaults()
        if let d = r.object("defaults") {
            var dr = FieldReader(d, at: .root.appending("defaults"))
            dr.rejectUnknownKeys(defaultKeys)
            if let t = dr.string("push_type") {
                defaults.pushType = PushType(rawValue: t)
                if defaults.pushType == nil { dr.problem(.invalidValue, "push_type", "unknown push type \(TextSafetyQuote.string(t))") }
            }
            defaults.sound = CampaignReader.readSound(&dr)
            defaults.category = dr.plainString("category")
            defaults.threadId = dr.plainString("thread_id")
            if let l = dr.string("interruption_level") {
                defaults.interruptionLevel = InterruptionLevel(rawValue: l)
                if defaults.interruptionLevel == nil { dr.problem(.invalidValue, "interruption_level", "unknown level \(TextSafetyQuote.string(l))") }
            }
            r.problems += dr.problems
        }
        var deeplink: LinkPattern?
        if let link = r.string("deeplink") {
            switch LinkPattern.parse(link) {
            case .success(let p): deeplink = p
            case .failure(let why): r.problem(.invalidTemplate, "deeplink", why.message)
            }
        }
        var strings = Strings()
        if let s = r.object("strings") {
            strings = readStrings(s, at: .root.appending("strings"), problems: &r.problems)
            if strings.body == nil && !s.members.contains(where: { $0.key == "body" }) {
                r.problems.append(PayloadError(.missing, at: .root.appending("strings").appending("body"), "missing: the default body"))
            }
        } else if !r.has("strings") {
            r.problem(.missing, "strings", "missing: {\"title\", \"subtitle\", \"body\"} in the default language")
        }
        var locales: [String: Strings] = [:]
        if let l = r.object("locales") {
            for member in l.members {
                let here = JSONPath.root.appending("locales").appending(member.key)
                guard LanguageTag.isValid(member.key) else {
                    r.problems.append(PayloadError(.invalidTemplate, at: here, "\(TextSafetyQuote.string(member.key)) is not a language tag like \"pl\" or \"pl-PL\""))
                    continue
                }
                guard case .object(let o) = member.value else {
                    r.problems.append(PayloadError(.wrongType, at: here, "expected an object of title/subtitle/body, found \(member.value.kindDescription)"))
                    continue
                }
                let key = member.key.lowercased()
                if locales[key] != nil {
                    r.problems.append(PayloadError(.invalidTemplate, at: here, "the locale \(TextSafetyQuote.string(member.key)) is given twice (tags ignore case)"))
                }
                locales[key] = readStrings(o, at: here, problems: &r.problems)
            }
        }
        guard r.problems.isEmpty else { return .failure(CampaignRejection(problems: r.problems)) }
        return .success(Template(name: name, description: description, defaults: defaults, deeplink: deeplink,
                                 strings: strings, locales: locales))
    }

    static func readStrings(_ o: JSONObject, at path: JSONPath, problems: inout [PayloadError]) -> Strings {
        var r = FieldReader(o, at: path)
        r.rejectUnknownKeys(stringKeys)
        func text(_ key: String) -> TemplateText? {
            guard let s = r.string(key) else { return nil }
            switch TemplateText.parse(s) {
            case .success(let t): return t
            case .failure(let why): r.problem(.invalidTemplate, key, why.message); return nil
            }
        }
        let strings = Strings(title: text("title"), subtitle: text("subtitle"), body: text("body"))
        problems += r.problems
        return strings
    }
}
