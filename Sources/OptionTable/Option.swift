/// One option of a command, declared once: the parser reads it, the usage describes it,
/// and the reference page lists it, all from this value.
public struct Option: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// `--name`, no value.
        case flag
        /// `--name VALUE` or `--name=VALUE`; `placeholder` is how the usage shows the value.
        case value(placeholder: String)
    }

    /// Without the leading `--`.
    public let name: String
    /// A one-letter alias (`-h`), if any.
    public let short: Character?
    public let kind: Kind
    /// One line saying what the option does, shown in the usage.
    public let help: String
    /// A value option that may be given several times (each value kept, in order).
    public let repeatable: Bool

    public init(name: String, short: Character? = nil, kind: Kind, help: String, repeatable: Bool = false) {
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.repeatable = repeatable
    }

    public static func flag(_ name: String, short: Character? = nil, _ help: String) -> Option {
        Option(name: name, short: short, kind: .flag, help: help)
    }

    public static func value(_ name: String, _ placeholder: String, short: Character? = nil,
                             repeatable: Bool = false, _ help: String) -> Option {
        Option(name: name, short: short, kind: .value(placeholder: placeholder), help: help, repeatable: repeatable)
    }

    /// `--name PLACEHOLDER` (or `--name`), as the usage writes it.
    public var syntax: String {
        switch kind {
        case .flag: return "--\(name)"
        case .value(let placeholder): return "--\(name) \(placeholder)"
        }
    }

    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// Every command has it; the parser answers it before anything else.
    public static let help = Option.flag("help", short: "h", "print this help and exit")
}

/// A positional argument, for the usage (the command checks how many it got).
public struct Positional: Sendable, Hashable {
    /// How the usage shows it: `URL`, `FILE|-`.
    public let name: String
    public let help: String

    public init(_ name: String, _ help: String) {
        self.name = name
        self.help = help
    }
}
