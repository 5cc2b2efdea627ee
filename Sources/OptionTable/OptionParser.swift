import StrictJSON

/// What the parser read for a command: the values of its options, the flags given, and
/// the positionals in order. Only declared names can be asked for (a typo in a command's
/// code stops at once in a debug build instead of reading nothing).
public struct ParsedOptions: Sendable {
    public let declaration: CommandDeclaration
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    public private(set) var positionals: [String] = []

    init(declaration: CommandDeclaration) {
        self.declaration = declaration
    }

    /// The value of a value option (the last one, for a repeatable option), if given.
    public subscript(name: String) -> String? {
        assert(declaration.option(named: name)?.takesValue == true, "\(name) is not a declared value option")
        return values[name]?.last
    }

    /// Every value of a repeatable option, in the order given.
    public func all(_ name: String) -> [String] {
        assert(declaration.option(named: name)?.takesValue == true, "\(name) is not a declared value option")
        return values[name] ?? []
    }

    public func has(_ flag: String) -> Bool {
        assert(declaration.option(named: flag)?.takesValue == false, "\(flag) is not a declared flag")
        return flags.contains(flag)
    }

    /// True when the option was given at all, flag or value.
    public func given(_ name: String) -> Bool {
        flags.contains(name) || values[name] != nil
    }

    fileprivate mutating func add(_ option: Option, value: String?) {
        if let value { values[option.name, default: []].append(value) } else { flags.insert(option.name) }
    }

    fileprivate mutating func addPositional(_ text: String) { positionals.append(text) }
}

/// A mistake on the command line (exit 2, with the usage).
public struct UsageProblem: Error, Sendable, Equatable {
    public let message: String
    /// The option or subcommand the mistake most likely meant, for "did you mean".
    public let suggestion: String?

    public init(_ message: String, suggestion: String? = nil) {
        self.message = message
        self.suggestion = suggestion
    }

    /// `message; did you mean --config?`
    public var description: String {
        guard let suggestion else { return message }
        return "\(message); did you mean \(suggestion)?"
    }
}

public enum ParseOutcome: Sendable {
    /// `--help` or `-h` was given: print the usage on stdout, exit 0.
    case help
    case parsed(ParsedOptions)
}

/// Reads `--name VALUE`, `--name=VALUE`, `--flag`, `-h`, positionals, `-` (a positional:
/// standard input) and `--` (everything after it is positional) against a declaration.
/// Anything not declared is a problem, never ignored.
public enum OptionParser {
    public static func parse(_ arguments: [String], for declaration: CommandDeclaration) throws(UsageProblem) -> ParseOutcome {
        var parsed = ParsedOptions(declaration: declaration)
        var firstProblem: UsageProblem?
        var wantsHelp = false
        func problem(_ p: UsageProblem) { if firstProblem == nil { firstProblem = p } }

        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                parsed.addPositional(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }

            let option: Option?
            var inlineValue: String?
            if arg.hasPrefix("--") {
                var name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                option = declaration.option(named: name)
                if option == nil {
                    let names = declaration.allOptions.map(\.name)
                    problem(UsageProblem("unknown option \(quoted("--" + name))",
                                         suggestion: EditDistance.suggestion(for: name, among: names).map { "--" + $0 }))
                    continue
                }
            } else {
                let letters = Array(arg.dropFirst())
                option = letters.count == 1 ? declaration.allOptions.first { $0.short == letters[0] } : nil
                if option == nil {
                    let names = declaration.allOptions.map(\.name)
                    problem(UsageProblem("unknown option \(quoted(arg))",
                                         suggestion: EditDistance.suggestion(for: String(arg.drop { $0 == "-" }), among: names).map { "--" + $0 }))
                    continue
                }
            }
            guard let option else { continue }
            if option == Option.help { wantsHelp = true; continue }

            switch option.kind {
            case .flag:
                if inlineValue != nil { problem(UsageProblem("\(option.syntax) takes no value")); continue }
                if parsed.given(option.name) { problem(UsageProblem("\(option.syntax) given twice")); continue }
                parsed.add(option, value: nil)
            case .value(let placeholder):
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if i < arguments.count, !(arguments[i].hasPrefix("--") && arguments[i].count > 2) {
                    value = arguments[i]
                    i += 1
                } else {
                    // `--config --json` is a forgotten value, not a file named "--json";
                    // a value that really starts with `--` is written `--name=--value`.
                    problem(UsageProblem("--\(option.name) needs a value (\(placeholder))"))
                    continue
                }
                if !option.repeatable, parsed.given(option.name) {
                    problem(UsageProblem("--\(option.name) given twice"))
                    continue
                }
                parsed.add(option, value: value)
            }
        }
        if wantsHelp { return .help }
        if let firstProblem { throw firstProblem }
        if let max = declaration.maxPositionals, parsed.positionals.count > max {
            let extra = parsed.positionals[max]
            throw UsageProblem(max == 0 ? "unexpected argument \(quoted(extra)) (this command takes only options)"
                                        : "unexpected argument \(quoted(extra))")
        }
        return .parsed(parsed)
    }

    static func quoted(_ text: String) -> String { TextSafety.quoted(text) }
}
