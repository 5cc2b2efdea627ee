import DeepLinks
import StrictJSON

/// A payload body rendered once per campaign into constant bytes with holes: the holes
/// are string values holding per-device `{{variables}}`, and the per-device deep link.
/// Rendering for a device is then a walk that copies bytes and escapes only the values.
struct BodyLayout: Sendable {
    enum Piece: Sendable {
        case bytes([UInt8])
        /// The inside of a JSON string (quotes are in the neighbouring bytes).
        case text(CompiledText)
        /// `,"deeplink":…,"route":{…}` for this device (only when the link varies).
        case link
        /// A variable written as a JSON number (a Live Activity template's `numbers`).
        case number(name: String, campaignValue: String?)
    }

    var pieces: [Piece] = []
    /// Index in `pieces` of the alert body, the one text truncation may shorten.
    var bodyIndex: Int?

    /// A size estimate for reserving capacity, worked out once by `seal()`.
    private(set) var estimatedSize = 0

    mutating func seal() {
        estimatedSize = pieces.reduce(0) { n, p in if case .bytes(let b) = p { return n + b.count } else { return n + 64 } }
    }
}

/// Template text whose literal runs are already JSON-escaped; each variable keeps the
/// campaign-wide value to use when a device has none.
struct CompiledText: Sendable {
    enum Piece: Sendable {
        case escaped([UInt8])
        case variable(name: String, campaignValue: String?)
    }

    let pieces: [Piece]
    let original: TemplateText
    let campaignVariables: [NamedValue]

    init(_ text: TemplateText, campaignVariables: [NamedValue]) {
        original = text
        self.campaignVariables = campaignVariables
        pieces = text.pieces.map { piece in
            switch piece {
            case .literal(let s):
                var bytes: [UInt8] = []
                JSONWriter.appendEscaped(s, to: &bytes)
                return .escaped(bytes)
            case .variable(let name):
                return .variable(name: name, campaignValue: campaignVariables.value(named: name))
            }
        }
    }

    /// Appends the escaped text for `device`; returns the first variable nobody gave a
    /// value for (nothing useful is left in `out` then).
    @inline(__always)
    func append(for device: Device, to out: inout [UInt8]) -> String? {
        for piece in pieces {
            switch piece {
            case .escaped(let bytes):
                out.append(contentsOf: bytes)
            case .variable(let name, let campaignValue):
                guard let value = device.variable(name) ?? campaignValue else { return name }
                JSONWriter.appendEscaped(value, to: &out)
            }
        }
        return nil
    }

    /// The unescaped text for `device` (truncation works on characters, not bytes).
    func plainText(for device: Device) -> Result<String, MissingVariable> {
        original.render { name in
            device.variable(name) ?? campaignVariables.value(named: name)
        }
    }
}
