import DeepLinks
import OptionTable
import StrictJSON

/// `pushgate aasa generate` and `pushgate aasa validate FILE|- [--json]`, against the
/// route table `--config` names or the `--routes` file.
enum AASACommand {
    static let command = Command.group("aasa", "generate or validate apple-app-site-association", [
        Command(CommandDeclaration(
            path: ["aasa", "generate"], summary: "print the apple-app-site-association file for the route table",
            forms: ["[--config PATH | --routes PATH]"],
            options: RouteTableOptions.options,
            notes: ["Exit status: 0 written, 1 the file cannot express the table exactly (warnings on stderr), 2 usage or route table error."]),
            run: generate),
        Command(CommandDeclaration(
            path: ["aasa", "validate"], summary: "check an apple-app-site-association file against the route table",
            forms: ["FILE|- [--json] [--config PATH | --routes PATH]"],
            positionals: [Positional("FILE|-", "the file to check; - reads it from standard input")],
            options: RouteTableOptions.options + [.flag("json", "print the findings as one JSON object")],
            notes: ["Exit status: 0 consistent, 1 findings, 2 usage, unreadable file or route table error."]),
            run: validate),
    ])

    /// Files up to this size are read; over Apple's 128 KB they are still checked for
    /// shape, and the size is the one finding.
    static let maxFileBytes = 4 << 20

    /// Prints the file, pretty and deterministic. The output is checked with the same
    /// validator; if it is not exactly consistent (a table shape the generator cannot
    /// express), the findings go to stderr and the exit status is 1.
    static func generate(_ args: Invocation) -> Int32 {
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .success(let t): table = t
        case .failure(let failure): return args.fail(failure)
        }
        let json = AASAGenerator.applinks(for: table)
        Output.write(JSONWriter.pretty(json))
        do throws(AASAError) {
            let findings = AASAValidator(table: table).validate(try AASAParser.parse(json))
            for finding in findings {
                Output.error("pushgate aasa generate: warning: the generated file is not exact: \(finding.message)")
            }
            return findings.isEmpty ? ExitStatus.ok : ExitStatus.findings
        } catch {
            Output.error("pushgate aasa generate: the generated file does not read back: \(error)")
            return ExitStatus.findings
        }
    }

    static func validate(_ args: Invocation) -> Int32 {
        guard args.positionals.count == 1 else { return args.usageError("give the AASA file to check (- for standard input)") }
        let file = args.positionals[0]
        let table: RouteTable
        switch RouteTableOptions.load(args) {
        case .success(let t): table = t
        case .failure(let failure): return args.fail(failure)
        }
        let label = file == "-" ? "<stdin>" : file
        let shownFile = TextSafety.escapedForDisplay(label)
        let document: AASADocument
        var findings: [AASAFinding] = []
        switch readInput(path: file, limit: maxFileBytes) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let bytes):
            if bytes.count > AASAFinding.maxAppleFileBytes {
                findings.append(AASAFinding(code: .fileTooLarge,
                    message: "the file is \(bytes.count) bytes; Apple reads at most \(AASAFinding.maxAppleFileBytes)"))
            }
            do throws(AASAError) {
                document = try AASAParser.parse(bytes)
            } catch {
                Output.error("\(args.command.invocation): " + Diagnostic(DiagnosticCode(rawValue: error.code.rawValue), at: .file(label, at: error.path), error.message).description)
                return ExitStatus.usage
            }
        }
        // Apple ignores an oversized file altogether, so matching it would report moot
        // findings (and the size bounds the matching work).
        if findings.isEmpty { findings = AASAValidator(table: table).validate(document) }
        if args.has("json") {
            Output.writeBytes(AASAFindingsJSON.line(findings))
        } else {
            for finding in findings {
                Output.line(Diagnostic(DiagnosticCode(rawValue: finding.code.rawValue), at: .file(label, at: finding.location ?? .root),
                                       finding.message).description)
            }
            let routes = table.routes.count
            Output.line(findings.isEmpty
                ? "\(shownFile): consistent with the route table (\(routes) routes)"
                : "\(shownFile): \(findings.count) finding\(findings.count == 1 ? "" : "s")")
        }
        return findings.isEmpty ? ExitStatus.ok : ExitStatus.findings
    }
}

/// `{"ok":…,"findings":[{"code":…,"message":…,"location":…,"pointer":…,"route":…,"example":…}]}`
/// (absent fields left out).
enum AASAFindingsJSON {
    static func line(_ findings: [AASAFinding]) -> [UInt8] {
        var items: [JSON] = []
        for finding in findings {
            var members = [JSONMember(key: "code", value: .string(finding.code.rawValue)),
                           JSONMember(key: "message", value: .string(finding.message))]
            if let location = finding.location {
                members.append(JSONMember(key: "location", value: .string(location.description)))
                members.append(JSONMember(key: "pointer", value: .string(location.pointer)))
            }
            if let route = finding.route { members.append(JSONMember(key: "route", value: .string(route))) }
            if let example = finding.example { members.append(JSONMember(key: "example", value: .string(example))) }
            items.append(.object(JSONObject(members)))
        }
        var writer = JSONWriter()
        writer.value(.object(JSONObject([JSONMember(key: "ok", value: .bool(findings.isEmpty)),
                                         JSONMember(key: "findings", value: .array(items))])))
        writer.byte(UInt8(ascii: "\n"))
        return writer.bytes
    }
}
