import DeepLinks
import StrictJSON

/// `pushgate check-link URL [--routes PATH | --config PATH [--app NAME]] [--json]` and
/// `pushgate check-link --stdin [--routes PATH | --config PATH [--app NAME]]` (JSON Lines, streamed).
enum CheckLinkCommand {
    static let usage = "usage: pushgate check-link URL [--routes PATH | --config PATH [--app NAME]] [--json]\n"
        + "       pushgate check-link --stdin [--routes PATH | --config PATH [--app NAME]]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments(arguments, valued: RouteTableOptions.valued, flags: ["json", "stdin"])
        } catch {
            return usageError(error.message)
        }
        let fromStdin = args.has("stdin")
        if fromStdin && !args.positionals.isEmpty {
            return usageError("--stdin reads links from standard input; give no URL argument")
        }
        if !fromStdin && args.positionals.count != 1 {
            return usageError(args.positionals.isEmpty ? "give one URL, or --stdin" : "give exactly one URL")
        }
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .success(let t): table = t
        case .failure(let failure):
            Output.error("pushgate check-link: \(failure.message)")
            return failure.status
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

    private static func usageError(_ message: String) -> Int32 {
        Output.error("pushgate check-link: \(message)\n\(usage)")
        return ExitStatus.usage
    }
}
