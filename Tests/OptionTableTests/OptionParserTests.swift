import OptionTable
import Testing

@Suite struct OptionParserTests {
    static let declaration = CommandDeclaration(
        path: ["demo"], summary: "a command for the tests",
        positionals: [Positional("FILE", "a file")],
        options: [
            .value("config", "PATH", "the configuration"),
            .value("device", "TOKEN", repeatable: true, "a device"),
            .flag("json", "JSON output"),
            .flag("dry-run", "send nothing"),
        ])

    static func parse(_ arguments: [String]) throws(UsageProblem) -> ParsedOptions {
        switch try OptionParser.parse(arguments, for: declaration) {
        case .help: throw UsageProblem("help was asked for")
        case .parsed(let options): return options
        }
    }

    static func problem(_ arguments: [String]) -> UsageProblem? {
        do { _ = try OptionParser.parse(arguments, for: declaration); return nil } catch { return error }
    }

    @Test func valuesFlagsAndPositionals() throws {
        let p = try Self.parse(["--config", "a.json", "--json", "file", "--device=ab", "--device", "cd"])
        #expect(p["config"] == "a.json")
        #expect(p.has("json"))
        #expect(!p.has("dry-run"))
        #expect(p.all("device") == ["ab", "cd"])
        #expect(p.positionals == ["file"])
        #expect(p.given("config") && !p.given("dry-run"))
    }

    @Test func dashIsAPositionalAndDoubleDashEndsOptions() throws {
        #expect(try Self.parse(["-"]).positionals == ["-"])
        let p = try Self.parse(["--", "--json"])
        #expect(p.positionals == ["--json"])
        #expect(!p.has("json"))
        #expect(try Self.parse(["--config=--odd"])["config"] == "--odd")
        #expect(try Self.parse(["--config", "-"])["config"] == "-")
    }

    @Test(arguments: [["--help"], ["-h"], ["--json", "-h"], ["--nonsense", "--help"], ["a", "b", "c", "--help"]])
    func helpWinsWherever(_ arguments: [String]) throws {
        guard case .help = try OptionParser.parse(arguments, for: Self.declaration) else {
            Issue.record("expected help for \(arguments)")
            return
        }
    }

    @Test func helpAfterDoubleDashIsAPositional() throws {
        #expect(try Self.parse(["--", "-h"]).positionals == ["-h"])
    }

    @Test func mistakesAreNamedPrecisely() {
        #expect(Self.problem(["--confg", "x"]) == UsageProblem("unknown option \"--confg\"", suggestion: "--config"))
        #expect(Self.problem(["--dry"]) == UsageProblem("unknown option \"--dry\"", suggestion: "--dry-run"))
        #expect(Self.problem(["--zzzzzz"]) == UsageProblem("unknown option \"--zzzzzz\""))
        #expect(Self.problem(["-x"]) == UsageProblem("unknown option \"-x\""))
        #expect(Self.problem(["--config"]) == UsageProblem("--config needs a value (PATH)"))
        #expect(Self.problem(["--config", "--json"]) == UsageProblem("--config needs a value (PATH)"))
        #expect(Self.problem(["--config", "a", "--config", "b"]) == UsageProblem("--config given twice"))
        #expect(Self.problem(["--json", "--json"]) == UsageProblem("--json given twice"))
        #expect(Self.problem(["--json=yes"]) == UsageProblem("--json takes no value"))
        #expect(Self.problem(["a", "b"]) == UsageProblem("unexpected argument \"b\""))
        #expect(Self.problem(["--\u{202E}x"])?.message == "unknown option \"--\\u202ex\"")
    }

    @Test func theSuggestionIsPartOfTheMessage() {
        #expect(UsageProblem("unknown option \"--jsn\"", suggestion: "--json").description
                == "unknown option \"--jsn\"; did you mean --json?")
    }

    @Test func aCommandWithoutPositionalsRefusesOne() {
        let declaration = CommandDeclaration(path: ["jwt"], summary: "x", options: [.flag("json", "y")])
        #expect(throws: UsageProblem("unexpected argument \"extra\" (this command takes only options)")) {
            try OptionParser.parse(["extra"], for: declaration)
        }
    }
}

@Suite struct EditDistanceTests {
    @Test func distances() {
        #expect(EditDistance.between("config", "config") == 0)
        #expect(EditDistance.between("confg", "config") == 1)
        #expect(EditDistance.between("sedn", "send") == 1, "a swap of neighbours is one edit")
        #expect(EditDistance.between("", "abc") == 3)
        #expect(EditDistance.between("kitten", "sitting") == 3)
    }

    @Test func suggestions() {
        let names = ["config", "routes", "json", "stdin", "help"]
        #expect(EditDistance.suggestion(for: "rouets", among: names) == "routes")
        #expect(EditDistance.suggestion(for: "jsno", among: names) == "json")
        #expect(EditDistance.suggestion(for: "xyz", among: names) == nil)
        #expect(EditDistance.suggestion(for: "js", among: names) == nil, "two letters off a four-letter word is not a typo")
        #expect(EditDistance.suggestion(for: "std", among: names) == "stdin", "the start of exactly one")
        #expect(EditDistance.suggestion(for: "", among: names) == nil)
    }
}

@Suite struct UsageTests {
    @Test func everyOptionAndPositionalIsDescribed() {
        let text = Usage.text(for: OptionParserTests.declaration)
        #expect(text.hasPrefix("usage: pushgate demo [options]\n\nA command for the tests.\n"))
        for option in OptionParserTests.declaration.allOptions {
            #expect(text.contains(option.syntax + " "), "\(option.name)")
            #expect(text.contains(String(option.help.prefix(10))), "\(option.name)")
        }
        #expect(text.contains("  FILE  "))
        #expect(text.contains("-h, --help"))
        #expect(text.contains("(may be repeated)"))
    }

    @Test func longDescriptionsWrapAtEightyColumns() {
        let long = String(repeating: "word ", count: 40)
        let declaration = CommandDeclaration(path: ["demo"], summary: long, options: [.flag("x", long)], notes: [long])
        for line in Usage.text(for: declaration).split(separator: "\n") where !line.hasPrefix("usage:") {
            #expect(line.count <= 80, "\(line)")
        }
        #expect(Usage.row("a-very-long-option-name PLACEHOLDER", "d").hasSuffix("\n" + String(repeating: " ", count: 26) + "d\n"))
    }
}
