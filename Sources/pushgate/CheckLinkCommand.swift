import DeepLinks
import OptionTable
import StrictJSON

/// `pushgate check-link URL [--json]` and `pushgate check-link --stdin` (JSON Lines,
/// streamed), against the route table `--config` names or the `--routes` file.
enum CheckLinkCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["check-link"], summary: "check deep links against the route table",
            forms: ["URL [--json] [--config PATH | --routes PATH]", "--stdin [--config PATH | --routes PATH]"],
            positionals: [Positional("URL", "the link to check; prints its canonical form, or the code and reason it is refused")],
            options: RouteTableOptions.options + [
                .flag("json", "print the result as one JSON object (what --stdin prints for each line)"),
                .flag("stdin", "check every line of standard input, one JSON object per line"),
            ],
            notes: ["Exit status: 0 every link accepted, 1 any refused, 2 usage or route table error."]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        let fromStdin = args.has("stdin")
        if fromStdin && !args.positionals.isEmpty {
            return args.usageError("--stdin reads links from standard input; give no URL argument")
        }
        if !fromStdin && args.positionals.isEmpty {
            return args.usageError("give one URL, or --stdin")
        }
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .success(let t): table = t
        case .failure(let failure): return args.fail(failure)
        }
        if fromStdin { return streamLines(table) }
        return checkOne(args.positionals[0], table: table, json: args.has("json"))
    }

    private static func checkOne(_ link: String, table: RouteTable, json: Bool) -> Int32 {
        let result = table.check(link)
        if json {
            Output.writeBytes(LinkResultJSON.line(result))
        } else {
            switch result {
            case .accepted(let canonical): Output.line(canonical.canonical)
            case .rejected(let rejection): Output.line("\(rejection.code.rawValue): \(rejection.message)")
            }
        }
        if case .accepted = result { return ExitStatus.ok }
        return ExitStatus.findings
    }

    private static func streamLines(_ table: RouteTable) -> Int32 {
        var anyRejected = false
        var w = JSONWriter(capacity: 1 << 17)
        var lines = LineReader(FileDescriptorSource(fd: 0), maxLineBytes: LinkLimits.maxLineBytes)
        do throws(ByteReadError) {
            while let line = try lines.next() {
                switch line {
                case .text(let bytes):
                    if !LinkResultJSON.write(checking: bytes, against: table, to: &w) { anyRejected = true }
                case .tooLong(let byteCount):
                    LinkResultJSON.write(.rejected(.tooLong(byteCount: byteCount)), to: &w)
                    anyRejected = true
                }
                w.raw("\n")
                if w.count >= 1 << 16 {
                    w.withBytes { Output.writeBytes($0) }
                    w.removeAll()
                }
            }
            w.withBytes { Output.writeBytes($0) }
        } catch {
            w.withBytes { Output.writeBytes($0) }  // the answers so far, before the error
            Output.error("pushgate check-link: cannot read standard input after line \(lines.lineNumber): \(error.message)")
            return ExitStatus.usage
        }
        return anyRejected ? ExitStatus.findings : ExitStatus.ok
    }
}
