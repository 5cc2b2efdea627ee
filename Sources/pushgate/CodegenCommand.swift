import Codegen
import DeepLinks
import Gateway
import StrictJSON

/// `pushgate codegen swift|swift-runner|vectors|check`: the app's half of the route table
/// (docs/codegen.md).
enum CodegenCommand {
    static let usage = """
        usage: pushgate codegen swift [--config PATH [--app NAME] | --routes PATH] [--type NAME] [--output FILE]
               pushgate codegen swift-runner [--type NAME] [--output FILE]
               pushgate codegen vectors [--config PATH [--app NAME] | --routes PATH] [--count N] [--seed N]
               pushgate codegen check FILE [--config PATH [--app NAME] | --routes PATH]
        """

    static func run(_ arguments: [String]) -> Int32 {
        let rest = Array(arguments.dropFirst())
        switch arguments.first {
        case "swift": return swift(rest)
        case "swift-runner": return runner(rest)
        case "vectors": return vectors(rest)
        case "check": return check(rest)
        case nil: return usageError("give a subcommand: swift, swift-runner, vectors or check")
        case let other?: return usageError("unknown subcommand \(TextSafety.quoted(other))")
        }
    }

    private static func usageError(_ message: String) -> Int32 {
        Output.error("pushgate codegen: \(message)\n\(usage)")
        return ExitStatus.usage
    }

    private static func fail(_ command: String, _ failure: CLIFailure) -> Int32 {
        Output.error("pushgate codegen \(command): \(failure.message)")
        return failure.status
    }

    private static func options(_ command: String, _ arguments: [String], valued: Set<String>) throws(CommandExit) -> Arguments {
        try Arguments.forOptionsOnly(command: "codegen \(command)", arguments, usage: usage, valued: valued)
    }

    /// Prints `text`, or writes it to `--output`.
    private static func emit(_ command: String, _ text: String, _ args: Arguments) -> Int32 {
        guard let path = args[option: "output"] else {
            Output.write(text)
            return ExitStatus.ok
        }
        if case .failure(let failure) = writeTextFile(path: path, text) { return fail(command, failure) }
        return ExitStatus.ok
    }

    private static func swift(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do { args = try options("swift", arguments, valued: RouteTableOptions.valued.union(["type", "output"])) } catch { return error.status }
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .failure(let failure): return fail("swift", failure)
        case .success(let t): table = t
        }
        let typeName = args[option: "type"] ?? SwiftRouterGenerator.defaultTypeName
        var command = "pushgate codegen swift \(RouteTableOptions.shown(args)) --type \(typeName)"
        if let output = args[option: "output"] { command += " --output \(output)" }
        do throws(CodegenError) {
            let text = try SwiftRouterGenerator.generate(table: table, typeName: typeName, fingerprint: table.fingerprint,
                                                         command: TextSafety.escapedForDisplay(command))
            return emit("swift", text, args)
        } catch {
            return fail("swift", .configuration(error.description))
        }
    }

    private static func runner(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do { args = try options("swift-runner", arguments, valued: ["type", "output"]) } catch { return error.status }
        do throws(CodegenError) {
            return emit("swift-runner", try RunnerGenerator.generate(typeName: args[option: "type"] ?? SwiftRouterGenerator.defaultTypeName), args)
        } catch {
            return fail("swift-runner", .configuration(error.description))
        }
    }

    /// JSON Lines `{"link":…,"expected":{…}}`, `expected` being exactly what
    /// `check-link --stdin` prints for the link: alternately a valid and a hostile link.
    private static func vectors(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do { args = try options("vectors", arguments, valued: RouteTableOptions.valued.union(["count", "seed"])) } catch { return error.status }
        guard let count = Int(args[option: "count"] ?? "1000"), count >= 0, count <= 10_000_000 else {
            return usageError("--count takes a number of links from 0 to 10000000")
        }
        guard let seed = UInt64(args[option: "seed"] ?? "1") else {
            return usageError("--seed takes a non-negative integer")
        }
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .failure(let failure): return fail("vectors", failure)
        case .success(let t): table = t
        }
        var generator = SampleLinkGenerator(table: table, seed: seed)
        var w = JSONWriter(capacity: 1 << 17)
        for i in 0..<count {
            let link = i % 2 == 0 ? generator.validLink() : generator.hostileLink()
            w.object { w in
                w.member("link", link)
                w.key("expected")
                LinkResultJSON.write(table.check(link), to: &w)
            }
            w.raw("\n")
            if w.count >= 1 << 16 {
                Output.writeBytes(w.bytes)
                w.removeAll()
            }
        }
        Output.writeBytes(w.bytes)
        return ExitStatus.ok
    }

    /// Exit 0 when FILE is what this pushgate generates for the table, 1 when it came from
    /// another table (or another version of the engine, or was edited), 2 when it is not a
    /// generated router at all.
    private static func check(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments(arguments, valued: RouteTableOptions.valued, flags: ["help"])
        } catch {
            return usageError(error.message)
        }
        if args.has("help") { Output.line(usage); return ExitStatus.ok }
        guard args.positionals.count == 1 else { return usageError("check takes exactly one generated Swift file") }
        let path = args.positionals[0]
        let shown = TextSafety.escapedForDisplay(path)
        let table: RouteTable
        let text: String
        switch RouteTableOptions.load(args).flatMap({ t in readSmallFile(path: path, limit: 16 << 20).map { (t, $0) } }) {
        case .failure(let failure): return fail("check", failure)
        case .success(let (t, bytes)):
            table = t
            text = String(decoding: bytes, as: UTF8.self)
        }
        guard let generated = GeneratedRouterFile(text) else {
            Output.error("pushgate codegen check: \(shown): not a router written by pushgate codegen swift (no tableFingerprint)")
            return ExitStatus.usage
        }
        let fingerprint = table.fingerprint
        if generated.fingerprint != fingerprint {
            Output.line("\(shown): generated from another route table (its tableFingerprint is \(generated.fingerprint), the table's is \(fingerprint)); regenerate it with pushgate codegen swift")
            return ExitStatus.findings
        }
        do throws(CodegenError) {
            let current = try SwiftRouterGenerator.generate(table: table, typeName: generated.typeName, fingerprint: fingerprint, command: "")
            if GeneratedRouterFile.body(of: current) != GeneratedRouterFile.body(of: text) {
                Output.line("\(shown): same route table, but the code differs from what this pushgate generates (another pushgate version, or edited by hand); regenerate it with pushgate codegen swift")
                return ExitStatus.findings
            }
        } catch {
            return fail("check", .configuration(error.description))
        }
        Output.line("\(shown): up to date with the route table (fingerprint \(fingerprint))")
        return ExitStatus.ok
    }
}
