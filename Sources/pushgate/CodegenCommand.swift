import Codegen
import DeepLinks
import Gateway
import OptionTable
import StrictJSON

/// `pushgate codegen swift|swift-runner|vectors|check`: the app's half of the route table
/// (docs/codegen.md).
enum CodegenCommand {
    static let typeOption = Option.value("type", "NAME", "the router type's name (default: \(SwiftRouterGenerator.defaultTypeName))")
    static let outputOption = Option.value("output", "FILE", "write the file here instead of printing it")

    static let command = Command.group("codegen", "generate the app's Swift router, its conformance runner and test vectors", [
        Command(CommandDeclaration(
            path: ["codegen", "swift"], summary: "print the Swift router for the route table (one file, no dependencies)",
            forms: ["[--config PATH | --routes PATH] [--type NAME] [--output FILE]"],
            options: RouteTableOptions.options + [typeOption, outputOption]),
            run: swift),
        Command(CommandDeclaration(
            path: ["codegen", "swift-runner"], summary: "print a main.swift that answers links on stdin as check-link --stdin does",
            forms: ["[--type NAME] [--output FILE]"],
            options: [typeOption, outputOption]),
            run: runner),
        Command(CommandDeclaration(
            path: ["codegen", "vectors"], summary: "print test vectors: links and what check-link --stdin answers for each (JSON Lines)",
            forms: ["[--config PATH | --routes PATH] [--count N] [--seed N]"],
            options: RouteTableOptions.options + [
                .value("count", "N", "how many links, half valid and half hostile (0 to 10000000, default 1000)"),
                .value("seed", "N", "the random seed, for the same vectors every time (default 1)"),
            ]),
            run: vectors),
        Command(CommandDeclaration(
            path: ["codegen", "check"], summary: "check that a generated router is up to date with the route table",
            forms: ["FILE [--config PATH | --routes PATH]"],
            positionals: [Positional("FILE", "a Swift file written by pushgate codegen swift")],
            options: RouteTableOptions.options,
            notes: ["Exit status: 0 up to date, 1 generated from another table or edited, 2 not a generated router, or a usage error."]),
            run: check),
    ])

    /// Prints `text`, or writes it to `--output`.
    private static func emit(_ text: String, _ args: Invocation) -> Int32 {
        guard let path = args["output"] else {
            Output.write(text)
            return ExitStatus.ok
        }
        if case .failure(let failure) = writeTextFile(path: path, text) { return args.fail(failure) }
        return ExitStatus.ok
    }

    static func swift(_ args: Invocation) -> Int32 {
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .failure(let failure): return args.fail(failure)
        case .success(let t): table = t
        }
        let typeName = args["type"] ?? SwiftRouterGenerator.defaultTypeName
        var command = "pushgate codegen swift \(RouteTableOptions.shown(args)) --type \(typeName)"
        if let output = args["output"] { command += " --output \(output)" }
        do throws(CodegenError) {
            let text = try SwiftRouterGenerator.generate(table: table, typeName: typeName, fingerprint: table.fingerprint,
                                                         command: TextSafety.escapedForDisplay(command))
            return emit(text, args)
        } catch {
            return args.fail(.configuration(error.description))
        }
    }

    static func runner(_ args: Invocation) -> Int32 {
        do throws(CodegenError) {
            return emit(try RunnerGenerator.generate(typeName: args["type"] ?? SwiftRouterGenerator.defaultTypeName), args)
        } catch {
            return args.fail(.configuration(error.description))
        }
    }

    /// JSON Lines `{"link":…,"expected":{…}}`, `expected` being exactly what
    /// `check-link --stdin` prints for the link: alternately a valid and a hostile link.
    static func vectors(_ args: Invocation) -> Int32 {
        guard let count = Int(args["count"] ?? "1000"), count >= 0, count <= 10_000_000 else {
            return args.usageError("--count takes a number of links from 0 to 10000000")
        }
        guard let seed = UInt64(args["seed"] ?? "1") else {
            return args.usageError("--seed takes a non-negative integer")
        }
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .failure(let failure): return args.fail(failure)
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
    static func check(_ args: Invocation) -> Int32 {
        guard args.positionals.count == 1 else { return args.usageError("give the generated Swift file to check") }
        let path = args.positionals[0]
        let shown = TextSafety.escapedForDisplay(path)
        let table: RouteTable
        let text: String
        switch RouteTableOptions.load(args).flatMap({ t in readSmallFile(path: path, limit: 16 << 20).map { (t, $0) } }) {
        case .failure(let failure): return args.fail(failure)
        case .success(let (t, bytes)):
            table = t
            text = String(decoding: bytes, as: UTF8.self)
        }
        guard let generated = GeneratedRouterFile(text) else {
            Output.error("\(args.command.invocation): \(shown): not a router written by pushgate codegen swift (no tableFingerprint)")
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
            return args.fail(.configuration(error.description))
        }
        Output.line("\(shown): up to date with the route table (fingerprint \(fingerprint))")
        return ExitStatus.ok
    }
}
