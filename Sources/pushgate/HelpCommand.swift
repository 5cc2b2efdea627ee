import OptionTable

/// `pushgate help [COMMAND...]`: the list of commands, or one command's usage (the same
/// text as `pushgate COMMAND --help`); `--markdown` prints the reference page, every
/// command's usage, which docs/cli.md is (a test keeps them equal).
enum HelpCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["help"], summary: "list the commands, or print one command's usage",
            forms: ["[COMMAND [SUBCOMMAND]]", "--markdown"],
            positionals: [Positional("COMMAND", "the command to describe, e.g. check-link or config check")],
            options: [.flag("markdown", "print the reference of every command as Markdown (docs/cli.md)")],
            maxPositionals: 3),
        run: run)

    static func run(_ invocation: Invocation) -> Int32 {
        if invocation.has("markdown") {
            guard invocation.positionals.isEmpty else { return invocation.usageError("--markdown prints every command; give no command") }
            Output.write(reference)
            return ExitStatus.ok
        }
        guard !invocation.positionals.isEmpty else {
            Output.write(CommandRegistry.overview)
            return ExitStatus.ok
        }
        switch CommandRegistry.find(invocation.positionals) {
        case .success(let command):
            Output.write(command.usage)
            return ExitStatus.ok
        case .failure(let problem):
            Output.error("pushgate help: \(problem.description)\n\n\(CommandRegistry.overview)", terminated: false)
            return ExitStatus.usage
        }
    }

    /// docs/cli.md: the overview, then each command's usage, in the order `help` lists them.
    static var reference: String {
        var text = """
            # Command reference

            Generated from the commands' declarations by `pushgate help --markdown`; a test fails
            when this page and the program disagree. Every command also prints its own part with
            `pushgate help COMMAND`, `pushgate COMMAND --help` or `-h`.

            ```text
            \(CommandRegistry.overview)```

            """
        for command in CommandRegistry.all {
            text += "\n## `\(command.invocation)`\n\n```text\n\(command.usage)```\n"
        }
        return text
    }
}
