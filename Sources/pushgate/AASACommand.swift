import DeepLinks
import StrictJSON

/// `pushgate aasa generate [--routes PATH | --config PATH [--app NAME]]` and
/// `pushgate aasa validate FILE [--routes PATH | --config PATH [--app NAME]] [--json]`.
enum AASACommand {
    static let usage = "usage: pushgate aasa generate [--routes PATH | --config PATH [--app NAME]]\n"
        + "       pushgate aasa validate FILE|- [--routes PATH | --config PATH [--app NAME]] [--json]"

    /// Files up to this size are read; over Apple's 128 KB they are still checked for
    /// shape, and the size is the one finding.
    static let maxFileBytes = 4 << 20

    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case "generate": return generate(Array(arguments.dropFirst()))
        case "validate": return validate(Array(arguments.dropFirst()))
        case nil: return usageError("give a subcommand: generate or validate")
        case let other?: return usageError("unknown subcommand \(TextSafety.quoted(other))")
        }
    }

    /// Prints the file, pretty and deterministic. The output is checked with the same
    /// validator; if it is not exactly consistent (a table shape the generator cannot
    /// express), the findings go to stderr and the exit status is 1.
    private static func generate(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do { args = try Arguments(arguments, valued: RouteTableOptions.valued, flags: []) } catch { return usageError(error.message) }
        guard args.positionals.isEmpty else { return usageError("generate takes no file argument") }
        guard let table = loadTable(args) else { return ExitStatus.usage }
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

    private static func validate(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do { args = try Arguments(arguments, valued: RouteTableOptions.valued, flags: ["json"]) } catch { return usageError(error.message) }
        guard args.positionals.count == 1 else { return usageError("validate takes exactly one AASA file (- for stdin)") }
        let file = args.positionals[0]
        guard let table = loadTable(args) else { return ExitStatus.usage }
        let label = file == "-" ? "<stdin>" : file
        let shownFile = TextSafety.escapedForDisplay(label)
        let document: AASADocument
        var findings: [AASAFinding] = []
        switch readSmallFile(path: file == "-" ? "/dev/stdin" : file, limit: maxFileBytes) {
        case .failure(let failure):
            Output.error("pushgate aasa validate: \(failure.message)")
            return failure.status
        case .success(let bytes):
            if bytes.count > AASAFinding.maxAppleFileBytes {
                findings.append(AASAFinding(code: .fileTooLarge,
                    message: "the file is \(bytes.count) bytes; Apple reads at most \(AASAFinding.maxAppleFileBytes)"))
            }
            do throws(AASAError) {
                document = try AASAParser.parse(bytes)
            } catch {
                Output.error("pushgate aasa validate: " + Diagnostic(DiagnosticCode(rawValue: error.code.rawValue), at: .file(label, at: error.path), error.message).description)
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

    private static func loadTable(_ args: Arguments) -> RouteTable? {
        switch RouteTableOptions.load(args) {
        case .success(let table): return table
        case .failure(let failure):
            Output.error("pushgate aasa: \(failure.message)")
            return nil
        }
    }

    private static func usageError(_ message: String) -> Int32 {
        Output.error("pushgate aasa: \(message)\n\(usage)")
        return ExitStatus.usage
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
