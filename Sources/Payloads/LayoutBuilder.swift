import DeepLinks
import StrictJSON

/// Builds a `BodyLayout`: constant JSON goes into one running byte buffer; a text with
/// placeholders (and the alert body, which truncation may replace) becomes its own piece.
struct LayoutBuilder {
    private(set) var layout = BodyLayout()
    private var pending: [UInt8] = []
    private var needsComma: [Bool] = []
    let campaignVariables: [NamedValue]

    init(campaignVariables: [NamedValue]) {
        self.campaignVariables = campaignVariables
    }

    mutating func beginObject() {
        pending.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        pending.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    /// Writes `"key":` (after a comma when it is not the object's first member).
    mutating func key(_ key: String) {
        if needsComma.last == true { pending.append(UInt8(ascii: ",")) }
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
        JSONWriter.appendQuoted(key, to: &pending)
        pending.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        JSONWriter.appendQuoted(value, to: &pending)
    }

    mutating func raw(_ key: String, _ literal: String?) {
        guard let literal else { return }
        self.key(key)
        pending.append(contentsOf: literal.utf8)
    }

    mutating func stringArray(_ key: String, _ values: [String]?) {
        guard let values else { return }
        self.key(key)
        var w = JSONWriter()
        w.value(.array(values.map(JSON.string)))
        pending.append(contentsOf: w.bytes)
    }

    mutating func value(_ key: String, _ json: JSON) {
        self.key(key)
        var w = JSONWriter()
        w.value(json)
        pending.append(contentsOf: w.bytes)
    }

    /// A string member whose value may hold placeholders. `isBody` marks the one text
    /// truncation may replace, which therefore always gets its own piece.
    mutating func text(_ key: String, _ text: TemplateText?, isBody: Bool = false) {
        guard let text else { return }
        self.key(key)
        pending.append(UInt8(ascii: "\""))
        if !isBody, text.variableNames.isEmpty {
            for case .literal(let s) in text.pieces { JSONWriter.appendEscaped(s, to: &pending) }
        } else {
            flush()
            if isBody { layout.bodyIndex = layout.pieces.count }
            layout.pieces.append(.text(CompiledText(text, campaignVariables: campaignVariables)))
        }
        pending.append(UInt8(ascii: "\""))
    }

    /// Constant bytes written as they are (a pre-rendered fragment).
    mutating func fragment(_ bytes: [UInt8]) {
        pending.append(contentsOf: bytes)
    }

    /// The per-device link fragment goes here; it brings its own leading comma.
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
        guard !pending.isEmpty else { return }
        layout.pieces.append(.bytes(pending))
        pending.removeAll()
    }
}
