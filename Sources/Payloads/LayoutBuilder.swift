import DeepLinks
import StrictJSON

/// Builds a `BodyLayout`: constant JSON goes into one running byte buffer; a text with
/// placeholders (and the alert body, which truncation may replace) becomes its own piece.
struct LayoutBuilder {
    private(set) var layout = BodyLayout()
    /// The constant bytes since the last hole; the writer keeps the commas right across
    /// holes, because taking its bytes keeps its place.
    private var pending = JSONWriter()
    let campaignVariables: [NamedValue]

    init(campaignVariables: [NamedValue]) {
        self.campaignVariables = campaignVariables
    }

    mutating func beginObject() { pending.beginObject() }

    mutating func endObject() { pending.endObject() }

    mutating func key(_ key: String) { pending.key(key) }

    mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        pending.key(key)
        pending.string(value)
    }

    /// A number member, its JSON text as given (badge, volume, relevance score).
    mutating func number(_ key: String, _ text: String?) {
        guard let text else { return }
        pending.key(key)
        pending.number(text)
    }

    mutating func stringArray(_ key: String, _ values: [String]?) {
        guard let values else { return }
        pending.key(key)
        pending.array(values) { w, value in w.string(value) }
    }

    mutating func value(_ key: String, _ json: JSON) {
        pending.key(key)
        pending.value(json)
    }

    /// A string member whose value may hold placeholders. `isBody` marks the one text
    /// truncation may replace, which therefore always gets its own piece.
    mutating func text(_ key: String, _ text: TemplateText?, isBody: Bool = false) {
        guard let text else { return }
        pending.key(key)
        pending.beginString()
        if !isBody, text.variableNames.isEmpty {
            for case .literal(let s) in text.pieces { pending.escaped(s) }
        } else {
            flush()
            if isBody { layout.bodyIndex = layout.pieces.count }
            layout.pieces.append(.text(CompiledText(text, campaignVariables: campaignVariables)))
        }
        pending.endString()
    }

    /// A member whose value is a template's JSON: strings with placeholders become holes,
    /// and so do the placeholders written as numbers.
    mutating func templated(_ key: String, _ value: TemplateLiveActivity.Value) {
        pending.key(key)
        templatedValue(value)
    }

    private mutating func templatedValue(_ value: TemplateLiveActivity.Value) {
        switch value {
        case .constant(let json):
            pending.value(json)
        case .text(let text):
            pending.beginString()
            flush()
            layout.pieces.append(.text(CompiledText(text, campaignVariables: campaignVariables)))
            pending.endString()
        case .number(let name):
            pending.number("")  // the separator before it, and a value is due no more
            flush()
            layout.pieces.append(.number(name: name, campaignValue: campaignVariables.value(named: name)))
        case .object(let members):
            pending.beginObject()
            for member in members {
                pending.key(member.key)
                templatedValue(member.value)
            }
            pending.endObject()
        case .array(let items):
            pending.beginArray()
            items.forEach { templatedValue($0) }
            pending.endArray()
        }
    }

    /// Members rendered once for the whole campaign (the link's), spliced in as they are:
    /// they bring their own leading comma.
    mutating func fragment(_ members: [UInt8]) {
        pending.splice(members: members)
    }

    /// The per-device link members go here; they bring their own leading comma.
    mutating func deviceLink() {
        flush()
        layout.pieces.append(.link)
    }

    mutating func finish() -> BodyLayout {
        flush()
        layout.seal()
        return layout
    }

    private mutating func flush() {
        guard pending.count > 0 else { return }
        layout.pieces.append(.bytes(pending.takeBytes()))
    }
}
