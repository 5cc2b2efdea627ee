/// What a command is, as data: its name, a one-line summary, its forms, its positionals and
/// its options. The parser, the usage text, `pushgate help` and the reference page all
/// read this one value, so none of them can describe an option the command does not take.
public struct CommandDeclaration: Sendable {
    /// The words after `pushgate`: `["check-link"]`, `["config", "check"]`.
    public let path: [String]
    public let summary: String
    /// What follows the path on each usage line; `[options]` when empty.
    public let forms: [String]
    public let positionals: [Positional]
    /// The command's own options (`--help` is added by `allOptions`).
    public let options: [Option]
    /// The most positionals the command takes (nil: any number).
    public let maxPositionals: Int?
    /// Further lines for the usage: defaults, exit statuses, an example.
    public let notes: [String]

    public init(path: [String], summary: String, forms: [String] = [], positionals: [Positional] = [],
                options: [Option] = [], maxPositionals: Int? = nil, notes: [String] = []) {
        self.path = path
        self.summary = summary
        self.forms = forms
        self.positionals = positionals
        self.options = options
        self.maxPositionals = maxPositionals ?? positionals.count
        self.notes = notes
    }

    /// `pushgate config check`.
    public var invocation: String { (["pushgate"] + path).joined(separator: " ") }

    /// The command's options and `--help`, in the order the usage lists them.
    public var allOptions: [Option] { options + [Option.help] }

    public func option(named name: String) -> Option? {
        allOptions.first { $0.name == name }
    }
}
