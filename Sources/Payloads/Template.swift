import APNsCore
import StrictJSON

/// A notification template (`Templates/<name>.json`): text in a default language with
/// per-locale variants, defaults for APNs fields, and optionally a deep-link pattern.
///
/// ```json
/// {
///   "description": "…",
///   "default_locale": "en",
///   "defaults": {"push_type": "alert", "sound": "default", "category": "ORDER_READY",
///                "thread_id": "orders", "interruption_level": "time-sensitive"},
///   "deeplink": "https://example.com/order/{{order_id}}",
///   "variables": {"order_id": "the order's UUID"},
///   "strings": {"title": "…", "subtitle": "…", "body": "Order {{order_id}} is ready"},
///   "locales": {"pl": {"body": "…"}, "pl-PL": {"title": "…"}}
/// }
/// ```
/// A locale variant may give any subset of title/subtitle/body; what it leaves out comes
/// from the next fallback (`pl-PL` → `pl` → `strings`). `variables` describes the
/// placeholders for the people who fill them in; describing one that no text or link
/// uses is an error, so the descriptions cannot drift from the texts.
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
    /// The language of the default `strings` (`default_locale`), when the file says it.
    public var defaultLocale: String?
    /// The locale tags as the file writes them, in its order.
    public var localeTags: [String] = []
    /// Descriptions of placeholders, by name (`variables` in the file).
    public var variableDescriptions: [String: String] = [:]
    /// The Live Activity content the template produces (`live_activity`); its campaigns
    /// are `liveactivity` pushes and say only the event.
    public var liveActivity: TemplateLiveActivity?

    static let knownKeys = ["description", "default_locale", "defaults", "deeplink", "variables", "strings", "locales", "live_activity"]
    static let defaultKeys = ["push_type", "sound", "category", "thread_id", "interruption_level"]
    static let stringKeys = ["title", "subtitle", "body"]

    /// Title, subtitle and body for `locale`, each from the most specific variant that
    /// has it. Matching ignores case (`pl-pl` finds `pl-PL`).
    public func strings(for locale: String?) -> Strings {
        resolved(for: locale).strings
    }

    /// Which variant each text came from: a locale tag as the file writes it, or nil for
    /// the default `strings`. What a preview reports as "fell back to".
    public struct Sources: Sendable, Equatable {
        public var title: String?
        public var subtitle: String?
        public var body: String?

        public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
        }
    }

    /// `strings(for:)` together with where each text was found.
    public func resolved(for locale: String?) -> (strings: Strings, sources: Sources) {
        var chain: [(tag: String?, strings: Strings)] = []
        if let locale {
            for tag in LanguageTag.fallbackChain(locale.lowercased()) {
                if let s = locales[tag] { chain.append((writtenTag(tag), s)) }
            }
        }
        chain.append((nil, strings))
        func pick(_ field: KeyPath<Strings, TemplateText?>) -> (TemplateText?, String?) {
            guard let found = chain.first(where: { $0.strings[keyPath: field] != nil }) else { return (nil, nil) }
            return (found.strings[keyPath: field], found.tag)
        }
        let (title, titleSource) = pick(\.title)
        let (subtitle, subtitleSource) = pick(\.subtitle)
        let (body, bodySource) = pick(\.body)
        return (Strings(title: title, subtitle: subtitle, body: body),
                Sources(title: titleSource, subtitle: subtitleSource, body: bodySource))
    }

    /// Whether the default strings are a translation for `locale`: its fallback chain
    /// reaches `default_locale` (`en-GB` → `en`).
    public func defaultStringsServe(_ locale: String) -> Bool {
        guard let defaultLocale else { return false }
        return LanguageTag.fallbackChain(locale.lowercased()).contains(defaultLocale.lowercased())
    }

    /// The tag as the file writes it (`pl-PL` for `pl-pl`).
    func writtenTag(_ lowercased: String) -> String {
        localeTags.first { $0.lowercased() == lowercased } ?? lowercased
    }

    /// Every placeholder the template uses (default strings, every locale, the link), in
    /// order of first use, with its description when the file gives one.
    public var variables: [(name: String, description: String?)] {
        var texts = [strings.title, strings.subtitle, strings.body]
        for tag in localeTags {
            if let s = locales[tag.lowercased()] { texts += [s.title, s.subtitle, s.body] }
        }
        texts.append(deeplink?.text)
        var names: [String] = []
        for text in texts.compactMap({ $0 }) {
            for name in text.variableNames where !names.contains(name) { names.append(name) }
        }
        for name in liveActivity?.variableNames ?? [] where !names.contains(name) { names.append(name) }
        return names.map { ($0, variableDescriptions[$0]) }
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
        var r = ConfigReader(document: nil)
        let root = JSONPath.root
        r.rejectUnknownKeys(object, at: root, keys: knownKeys)
        let description = r.string(object, "description", at: root)?.value
        let defaultLocale = r.string(object, "default_locale", at: root)?.value
        if let tag = defaultLocale, !LanguageTag.isValid(tag) {
            r.problem(.invalidTemplate, at: root.appending("default_locale"), "\(TextSafety.quoted(tag)) is not a language tag like \"en\" or \"en-US\"")
        }
        var defaults = Defaults()
        if let d = r.object(object, "defaults", at: root) {
            let path = root.appending("defaults")
            r.rejectUnknownKeys(d, at: path, keys: defaultKeys)
            if let t = r.string(d, "push_type", at: path)?.value {
                defaults.pushType = PushType(rawValue: t)
                if defaults.pushType == nil { r.problem(.invalidValue, at: path.appending("push_type"), "unknown push type \(TextSafety.quoted(t))") }
            }
            defaults.sound = CampaignReader.readSound(d, at: path, &r)
            defaults.category = r.plainString(d, "category", at: path)
            defaults.threadId = r.plainString(d, "thread_id", at: path)
            if let l = r.string(d, "interruption_level", at: path)?.value {
                defaults.interruptionLevel = InterruptionLevel(rawValue: l)
                if defaults.interruptionLevel == nil { r.problem(.invalidValue, at: path.appending("interruption_level"), "unknown level \(TextSafety.quoted(l))") }
            }
        }
        var deeplink: LinkPattern?
        if let link = r.string(object, "deeplink", at: root)?.value {
            switch LinkPattern.parse(link) {
            case .success(let p): deeplink = p
            case .failure(let why): r.problem(.invalidTemplate, at: root.appending("deeplink"), why.message)
            }
        }
        var descriptions: [String: String] = [:]
        var describedOrder: [String] = []
        if let v = r.object(object, "variables", at: root) {
            let path = root.appending("variables")
            for member in v.members {
                guard TemplateText.isName(Substring(member.key)) else {
                    r.problem(.invalidTemplate, at: path.appending(member.key), "\(TextSafety.quoted(member.key)) is not a placeholder name: names are letters, digits and '_'")
                    continue
                }
                if let text = r.plainString(v, member.key, at: path) {
                    descriptions[member.key] = text
                    describedOrder.append(member.key)
                }
            }
        }
        var liveActivity: TemplateLiveActivity?
        if let value = object["live_activity"] {
            liveActivity = TemplateLiveActivity.read(value, at: root.appending("live_activity"), &r)
            if let type = defaults.pushType, type != .liveactivity {
                r.problem(.invalidTemplate, at: root.appending("defaults").appending("push_type"),
                          "a template with live_activity makes liveactivity pushes, not \(type.rawValue)")
            }
            defaults.pushType = .liveactivity
        }
        var strings = Strings()
        if let s = r.object(object, "strings", at: root) {
            strings = readStrings(s, at: root.appending("strings"), &r)
            if liveActivity == nil, strings.body == nil && !s.members.contains(where: { $0.key == "body" }) {
                r.problem(.missing, at: root.appending("strings").appending("body"), "missing: the default body")
            }
        } else if object["strings"] == nil && object["live_activity"] == nil {
            r.problem(.missing, at: root.appending("strings"), "missing: {\"title\", \"subtitle\", \"body\"} in the default language")
        }
        var locales: [String: Strings] = [:]
        var localeTags: [String] = []
        if let l = r.object(object, "locales", at: root) {
            for member in l.members {
                let here = JSONPath.root.appending("locales").appending(member.key)
                guard LanguageTag.isValid(member.key) else {
                    r.problem(.invalidTemplate, at: here, "\(TextSafety.quoted(member.key)) is not a language tag like \"pl\" or \"pl-PL\"")
                    continue
                }
                guard case .object(let o) = member.value else {
                    r.wrongType(member.value, at: here, expected: "an object of title/subtitle/body")
                    continue
                }
                let key = member.key.lowercased()
                if locales[key] != nil {
                    r.problem(.invalidTemplate, at: here, "the locale \(TextSafety.quoted(member.key)) is given twice (tags ignore case)")
                }
                locales[key] = readStrings(o, at: here, &r)
                localeTags.append(member.key)
            }
        }
        let template = Template(name: name, description: description, defaults: defaults, deeplink: deeplink,
                                strings: strings, locales: locales, defaultLocale: defaultLocale, localeTags: localeTags, variableDescriptions: descriptions,
                                liveActivity: liveActivity)
        let used = Set(template.variables.map(\.name))
        for name in describedOrder where !used.contains(name) {
            r.problem(.invalidTemplate, at: .root.appending("variables").appending(name),
                      "\(TextSafety.quoted(name)) is described but no text or link uses it")
        }
        guard r.isValid else { return .failure(CampaignRejection(problems: r.payloadErrors)) }
        return .success(template)
    }

    static func readStrings(_ o: JSONObject, at path: JSONPath, _ r: inout ConfigReader) -> Strings {
        r.rejectUnknownKeys(o, at: path, keys: stringKeys)
        func text(_ key: String) -> TemplateText? {
            guard let s = r.string(o, key, at: path)?.value else { return nil }
            switch TemplateText.parse(s) {
            case .success(let t): return t
            case .failure(let why): r.problem(.invalidTemplate, at: path.appending(key), why.message); return nil
            }
        }
        return Strings(title: text("title"), subtitle: text("subtitle"), body: text("body"))
    }
}
