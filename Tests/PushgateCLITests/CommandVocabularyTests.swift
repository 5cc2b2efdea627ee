import Foundation
import OptionTable
@testable import pushgate
import TestSupport
import Testing

/// Every command's help, usage errors and did-you-mean, driven by the declarations
/// themselves: a command added to the registry is covered without touching this file.
@Suite struct CommandVocabularyTests {
    static let commands = CommandRegistry.all
    static let paths = commands.map(\.declaration.path)

    @Test(arguments: paths)
    func helpIsTheUsageOnStdoutThreeWays(_ path: [String]) throws {
        let command = try #require(CommandRegistry.all.first { $0.declaration.path == path })
        for arguments in [["help"] + path, path + ["--help"], path + ["-h"]] {
            let r = try CLI.run(arguments)
            #expect(r.status == 0, "\(arguments)")
            #expect(r.stderr.isEmpty, "\(arguments): \(r.stderr)")
            #expect(r.stdout == command.usage, "\(arguments)")
        }
        let usage = command.usage
        #expect(usage.hasPrefix("usage: " + command.invocation))
        if command.run != nil {
            for option in command.declaration.allOptions {
                #expect(usage.contains(option.syntax + " "), "\(path): --\(option.name) not in the usage")
                #expect(!option.help.isEmpty, "\(path): --\(option.name) has no description")
                let start = option.help.split(separator: " ").prefix(3).joined(separator: " ")
                #expect(usage.contains(start), "\(path): --\(option.name)'s description not in the usage")
            }
        }
        for sub in command.subcommands {
            #expect(usage.contains("  \(sub.name) "), "\(path): subcommand \(sub.name) not listed")
        }
    }

    /// The forms shown on the usage lines name only declared options.
    @Test(arguments: paths)
    func formsNameOnlyDeclaredOptions(_ path: [String]) throws {
        let command = try #require(CommandRegistry.all.first { $0.declaration.path == path })
        let declared = Set(command.declaration.allOptions.map { "--" + $0.name })
        for form in command.declaration.forms {
            for word in form.split(whereSeparator: { " []|".contains($0) }) where word.hasPrefix("--") {
                #expect(declared.contains(String(word)), "\(path): the form \"\(form)\" shows \(word), which is not declared")
            }
        }
    }

    @Test(arguments: paths)
    func anUnknownOptionIsExit2WithTheUsageAndASuggestion(_ path: [String]) throws {
        let command = try #require(CommandRegistry.all.first { $0.declaration.path == path })
        let r = try CLI.run(path + ["--no-such-option-at-all"])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("unknown option \"--no-such-option-at-all\""), "\(path): \(r.stderr)")
        #expect(r.stderr.contains(command.usage), "\(path)")
        #expect(!r.stderr.contains("did you mean"), "nothing is close to it")

        guard command.run != nil else { return }
        // Each option with its last two letters swapped is one edit away.
        for option in command.declaration.options where option.name.count >= 5 {
            var letters = Array(option.name)
            letters.swapAt(letters.count - 1, letters.count - 2)
            let typo = String(letters)
            guard typo != option.name, let expected = EditDistance.suggestion(for: typo, among: command.declaration.allOptions.map(\.name)) else { continue }
            let t = try CLI.run(path + ["--" + typo])
            #expect(t.status == 2)
            #expect(t.stderr.contains("unknown option \"--\(typo)\"; did you mean --\(expected)?"), "\(path): \(t.stderr)")
        }
    }

    @Test func theOverviewListsEveryCommand() throws {
        for arguments in [["help"], ["--help"], ["-h"]] {
            let r = try CLI.run(arguments)
            #expect(r.status == 0)
            #expect(r.stdout == CommandRegistry.overview)
        }
        for command in CommandRegistry.all where command.run != nil {
            #expect(CommandRegistry.overview.contains("  " + command.declaration.path.joined(separator: " ") + " "))
        }
        let none = try CLI.run([])
        #expect(none.status == 2)
        #expect(none.stderr == CommandRegistry.overview)
    }

    @Test func misspeltCommandsAreSuggested() throws {
        let top = try CLI.run(["sedn"])
        #expect(top.status == 2)
        #expect(top.stderr.hasPrefix("pushgate: unknown command \"sedn\"; did you mean 'pushgate send'?"))
        let sub = try CLI.run(["config", "chek"])
        #expect(sub.status == 2)
        #expect(sub.stderr.hasPrefix("pushgate config: unknown command \"chek\"; did you mean 'pushgate config check'?"))
        let help = try CLI.run(["help", "codegen", "swfit"])
        #expect(help.status == 2)
        #expect(help.stderr.hasPrefix("pushgate help: unknown command \"codegen swfit\"; did you mean 'pushgate codegen swift'?"))
        let option = try CLI.run(["--verison"])
        #expect(option.status == 2)
        #expect(option.stderr.hasPrefix("pushgate: unknown option \"--verison\"; did you mean --version?"))
    }

    @Test func versionPrintsTheVersionAndWhatItRunsWith() throws {
        let a = try CLI.run(["--version"])
        let b = try CLI.run(["version"])
        #expect(a.status == 0 && b.status == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.hasPrefix("pushgate \(PushgateVersionForTests.current)\nbuild: "))
        for label in ["Swift 6.", "libcurl: libcurl/", "openssl: OpenSSL 3", "sqlite: 3.", "libmicrohttpd: 0.9.", "os: Linux "] {
            #expect(a.stdout.contains(label), "\(label)")
        }
    }

    /// docs/cli.md is the reference the program prints; regenerate it with
    /// `.build/debug/pushgate help --markdown > docs/cli.md`.
    @Test func theReferencePageIsWhatTheProgramPrints() throws {
        let page = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let r = try CLI.run(["help", "--markdown"])
        #expect(r.status == 0)
        #expect(r.stdout == HelpCommand.reference)
        #expect(page == r.stdout, "docs/cli.md is stale: .build/debug/pushgate help --markdown > docs/cli.md")
        for command in CommandRegistry.all {
            #expect(page.contains("## `\(command.invocation)`"))
        }
    }
}

import Gateway
typealias PushgateVersionForTests = PushgateVersion
