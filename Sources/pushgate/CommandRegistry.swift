import OptionTable
import StrictJSON

/// A command of the `pushgate` executable: its declaration (name, options, usage), what it
/// does, and its subcommands (`config check`). A command may have both: `campaigns` lists,
/// `campaigns pause` pauses.
struct Command: Sendable {
    let declaration: CommandDeclaration
    let run: (@Sendable (Invocation) -> Int32)?
    let subcommands: [Command]

    init(_ declaration: CommandDeclaration, subcommands: [Command] = [], run: (@Sendable (Invocation) -> Int32)?) {
        self.declaration = declaration
        self.subcommands = subcommands
        self.run = run
    }

    /// A command that only groups subcommands (`aasa`, `codegen`).
    static func group(_ name: String, _ summary: String, _ subcommands: [Command]) -> Command {
        Command(CommandDeclaration(path: [name], summary: summary), subcommands: subcommands, run: nil)
    }

    var name: String { declaration.path.last ?? "" }
    var invocation: String { declaration.invocation }

    /// This command and every command under it, depth first (what help and the reference list).
    var allCommands: [Command] { [self] + subcommands.flatMap(\.allCommands) }

    /// The usage text, generated from the declarations.
    var usage: String {
        let listed = subcommands.map { (name: $0.name, summary: $0.declaration.summary) }
        let footer = "Run 'pushgate help \(declaration.path.joined(separator: " ")) COMMAND' for a command's options."
        guard run != nil else {
            return Usage.groupText(invocation: invocation, summary: declaration.summary, subcommands: listed, footer: footer)
        }
        guard !subcommands.isEmpty else { return Usage.text(for: declaration) }
        var text = Usage.text(for: declaration) + "\ncommands:\n"
        for sub in listed { text += Usage.row(sub.name, sub.summary) }
        return text + "\n" + footer + "\n"
    }
}

/// One run of a command: what was given, and the ways a command answers a mistake.
struct Invocation: Sendable {
    let options: ParsedOptions
    let command: Command

    subscript(name: String) -> String? { options[name] }
    func all(_ name: String) -> [String] { options.all(name) }
    func has(_ flag: String) -> Bool { options.has(flag) }
    var positionals: [String] { options.positionals }

    /// A mistake on the command line: the message and the usage on stderr, exit 2.
    func usageError(_ message: String) -> Int32 {
        Output.error("\(command.invocation): \(message)\n\n\(command.usage)", terminated: false)
        return ExitStatus.usage
    }

    /// A failure found while running: its message on stderr, its exit status.
    func fail(_ failure: CLIFailure) -> Int32 {
        Output.error("\(command.invocation): \(failure.message)")
        return failure.status
    }

    /// A failure with only a message (exit 2).
    func fail(_ message: String, status: Int32 = ExitStatus.usage) -> Int32 {
        fail(CLIFailure(message: message, status: status))
    }
}

enum CommandRegistry {
    /// Every command, in the order `pushgate help` lists them. Each lives in its own file.
    static let commands: [Command] = [
        HelpCommand.command,
        VersionCommand.command,
        CheckLinkCommand.command,
        AASACommand.command,
        CodegenCommand.command,
        RoutesCommand.command,
        PreviewCommand.command,
        SendCommand.command,
        JWTCommand.command,
        ServeCommand.command,
        CampaignsCommand.command,
        AppsCommand.command,
        ChannelsCommand.command,
        StorageCommand.command,
        ConfigCommand.command,
        HashKeyCommand.command,
    ]

    /// `pushgate` itself, whose subcommands are the commands.
    static let root = Command(
        CommandDeclaration(path: [], summary: "a push-notification gateway for iOS apps",
                           options: [.flag("version", "print the version and build information")]),
        subcommands: commands, run: nil)

    /// Every command and subcommand, depth first.
    static var all: [Command] { commands.flatMap(\.allCommands) }

    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case nil:
            Output.error(overview, terminated: false)
            return ExitStatus.usage
        case "--help", "-h":
            Output.write(overview)
            return ExitStatus.ok
        case "--version":
            return VersionCommand.print()
        default:
            return dispatch(root, arguments)
        }
    }

    /// Finds the command the words name and runs it with the rest.
    static func dispatch(_ command: Command, _ arguments: [String]) -> Int32 {
        if let word = arguments.first, let sub = command.subcommands.first(where: { $0.name == word }) {
            return dispatch(sub, Array(arguments.dropFirst()))
        }
        let isOption = arguments.first.map { $0.hasPrefix("-") && $0 != "-" } ?? false
        if !command.subcommands.isEmpty, let word = arguments.first, !isOption {
            // A word that is not a subcommand; for a command that also runs on its own
            // (`campaigns`), only when it looks like a misspelt one.
            let names = command.subcommands.map(\.name)
            let suggestion = EditDistance.suggestion(for: word, among: names)
            if command.run == nil || suggestion != nil {
                return unknownCommand(word, in: command, suggestion: suggestion)
            }
        }
        guard let run = command.run else {
            if arguments.first == "--help" || arguments.first == "-h" {
                Output.write(command === root ? overview : command.usage)
                return ExitStatus.ok
            }
            if isOption, let first = arguments.first {
                // `pushgate --verbose`, `pushgate config --json`: a group takes no options of its own.
                let names = command.declaration.allOptions.map(\.name)
                let suggestion = EditDistance.suggestion(for: String(first.drop { $0 == "-" }), among: names).map { "--" + $0 }
                let problem = UsageProblem("unknown option \(TextSafety.quoted(first))", suggestion: suggestion)
                Output.error("\(command.invocation): \(problem.description)\n\n\(command === root ? overview : command.usage)", terminated: false)
                return ExitStatus.usage
            }
            let list = command.subcommands.map(\.name).joined(separator: ", ")
            Output.error("\(command.invocation): give a command: \(list)\n\n\(command.usage)", terminated: false)
            return ExitStatus.usage
        }
        do throws(UsageProblem) {
            switch try OptionParser.parse(arguments, for: command.declaration) {
            case .help:
                Output.write(command.usage)
                return ExitStatus.ok
            case .parsed(let options):
                return run(Invocation(options: options, command: command))
            }
        } catch {
            Output.error("\(command.invocation): \(error.description)\n\n\(command.usage)", terminated: false)
            return ExitStatus.usage
        }
    }

    static func unknownCommand(_ word: String, in command: Command, suggestion: String?) -> Int32 {
        let problem = UsageProblem("unknown command \(TextSafety.quoted(word))",
                                   suggestion: suggestion.map { "'\(command.invocation) \($0)'" })
        Output.error("\(command.invocation): \(problem.description)\n\n\(command === root ? overview : command.usage)", terminated: false)
        return ExitStatus.usage
    }

    /// What `pushgate help` prints: every command with its summary.
    static var overview: String {
        var text = "usage: pushgate <command> [options]\n       pushgate --version\n\ncommands:\n"
        for command in all where command.run != nil {
            text += Usage.row(command.declaration.path.joined(separator: " "), command.declaration.summary)
        }
        text += "\nRun 'pushgate help COMMAND' (or 'pushgate COMMAND --help') for a command's options.\n"
        text += "Exit status: 0 success, 1 findings or rejections, 2 usage or configuration error.\n"
        return text
    }

    /// The command `words` names (`["config", "check"]`), or the first word that names none.
    static func find(_ words: [String]) -> Result<Command, UsageProblem> {
        var command = root
        for word in words {
            guard let sub = command.subcommands.first(where: { $0.name == word }) else {
                let suggestion = EditDistance.suggestion(for: word, among: command.subcommands.map(\.name))
                let prefix = command.declaration.path.joined(separator: " ")
                return .failure(UsageProblem("unknown command \(TextSafety.quoted((prefix.isEmpty ? "" : prefix + " ") + word))",
                                             suggestion: suggestion.map { "'pushgate \(prefix.isEmpty ? "" : prefix + " ")\($0)'" }))
            }
            command = sub
        }
        return .success(command)
    }
}

extension Command {
    /// Commands are told apart by their path.
    static func === (a: Command, b: Command) -> Bool { a.declaration.path == b.declaration.path }
}

enum ExitStatus {
    static let ok: Int32 = 0
    static let findings: Int32 = 1
    static let usage: Int32 = 2
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
