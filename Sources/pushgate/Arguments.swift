import StrictJSON
/// A small, strict argument reader: `--name value`, `--name=value`, flags, and
/// positionals. Unknown options are usage errors (exit 2), never ignored.
struct Arguments {
    struct UsageError: Error {
        let message: String
    }

    private(set) var options: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - valued: options that take a value (without the leading `--`).
    ///   - flags: options that take none.
    init(_ arguments: [String], valued: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlyPositionals || !arg.hasPrefix("--") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if valued.contains(name) {
                if options[name] != nil { throw UsageError(message: "--\(name) given twice") }
                if let v = inlineValue {
                    options[name] = v
                } else {
                    guard i < arguments.count else { throw UsageError(message: "--\(name) needs a value") }
                    options[name] = arguments[i]
                    i += 1
                }
            } else if allowedFlags.contains(name) {
                if inlineValue != nil { throw UsageError(message: "--\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option \(TextSafety.quoted(arg))")
            }
        }
    }

    subscript(option name: String) -> String? { options[name] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A command that has already answered (its `--help`, or a usage error) and exits with `status`.
struct CommandExit: Error {
    let status: Int32
}

extension Arguments {
    /// Reads the arguments of `pushgate <command>` for a command that takes only options:
    /// `--help` prints the usage and exits 0; a usage error or any positional argument
    /// prints the error and the usage and exits 2.
    static func forOptionsOnly(command: String, _ arguments: [String], usage: String,
                               valued: Set<String>, flags: Set<String> = []) throws(CommandExit) -> Arguments {
        let args: Arguments
        do {
            args = try Arguments(arguments, valued: valued, flags: flags.union(["help"]))
        } catch {
            Output.error("pushgate \(command): \(error.message)\n\(usage)")
            throw CommandExit(status: ExitStatus.usage)
        }
        if args.has("help") {
            Output.line(usage)
            throw CommandExit(status: ExitStatus.ok)
        }
        guard args.positionals.isEmpty else {
            Output.error("pushgate \(command): unexpected argument \(TextSafety.quoted(args.positionals[0]))\n\(usage)")
            throw CommandExit(status: ExitStatus.usage)
        }
        return args
    }
}
