import Foundation
import TestSupport
import Testing

/// The README's console blocks, run: every `$ ` command of "A five-minute tour" against the
/// built binary (and a `serve` on the shipped configuration for its `curl` lines), and the
/// start-up lines `make run` shows. A change that alters an output fails here, not silently
/// in the README.
@Suite struct ReadmeTourTests {
    @Test func everyTourCommandPrintsWhatTheReadmeShows() throws {
        let readme = try ReadmeConsole(path: TestPaths.packageRoot.appendingPathComponent("README.md").path)
        let steps = readme.steps(inSection: "A five-minute tour")
        #expect(steps.count >= 8, "the tour lost its commands")
        let dir = try TempDir()
        let server = try ServeProcess(config: "config/gateway.json", environment: [
            "PUSHGATE_STORAGE_PATH": dir.path("tour.db"), "PUSHGATE_SERVER_LISTEN": "127.0.0.1:0",
        ])
        defer { _ = server.terminate() }
        for step in steps {
            let command = step.command.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(server.port)")
            // A read of the server's state may run before the dispatcher finished: read again.
            let rereads = command.contains("127.0.0.1:") && !command.contains("-XPOST") ? 40 : 1
            var output = ""
            for attempt in 1...rereads {
                output = try Self.shell(command)
                if ReadmeConsole.matches(output: output, expected: step.expected) { break }
                if attempt < rereads { Thread.sleep(forTimeInterval: 0.25) }
            }
            #expect(ReadmeConsole.matches(output: output, expected: step.expected),
                    "README: `\(step.command)` printed:\n\(output)\nthe README shows:\n\(step.expected.joined(separator: "\n"))")
        }
    }

    /// `make run`'s block: after the command line `make` echoes, the lines `serve` writes at
    /// start-up with the shipped configuration, the two "what next" lines last.
    @Test func makeRunStartsAsTheReadmeShows() throws {
        let readme = try ReadmeConsole(path: TestPaths.packageRoot.appendingPathComponent("README.md").path)
        let step = try #require(readme.steps(inSection: "The two commands").first { $0.command == "make run" })
        let echoed = try #require(step.expected.firstIndex { $0.hasPrefix(".build/debug/pushgate serve") })
        #expect(step.expected[echoed] == ".build/debug/pushgate serve --config config/gateway.json")
        #expect(try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Makefile"), encoding: .utf8)
            .contains("\t" + step.expected[echoed] + "\n"), "the Makefile's run target is not the command the README shows")
        let dir = try TempDir()
        let server = try ServeProcess(config: "config/gateway.json", environment: [
            "PUSHGATE_STORAGE_PATH": dir.path("run.db"), "PUSHGATE_SERVER_LISTEN": "127.0.0.1:0",
        ])
        defer { _ = server.terminate() }
        let expected = step.expected[(echoed + 1)...].map { $0.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)") }
        var printed: [Substring] = []
        for _ in 0..<40 {
            printed = server.stderrText.split(separator: "\n", omittingEmptySubsequences: false)
            if printed.count > expected.count { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let startUp = printed.prefix(expected.count).joined(separator: "\n")
        #expect(ReadmeConsole.matches(output: startUp, expected: Array(expected)),
                "serve's start-up printed:\n\(startUp)\nthe README shows:\n\(expected.joined(separator: "\n"))")
    }

    @Test func theReadmeIsAFrontPage() throws {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 300, "README.md has \(lines.count) lines; details belong in docs/")
        let long = lines.filter { $0.count > 400 }
        #expect(long.isEmpty, "README.md lines over 400 characters: \(long.map { $0.prefix(60) })")
    }

    @Test func theMatcherRefusesWhatDiffers() {
        #expect(ReadmeConsole.matches(output: "a\nb\nc", expected: ["a", "…", "c"]))
        #expect(ReadmeConsole.matches(output: "id 3f2504e0-4f89-41d3-9a0c-0305e82c3301", expected: ["id 62187e7b-ec4c-4560-9cba-e59bd7686a27"]))
        #expect(ReadmeConsole.matches(output: "time           0 ms (5798 devices/s)", expected: ["time           8 ms (483 devices/s)"]))
        #expect(!ReadmeConsole.matches(output: "a\nb", expected: ["a"]))
        #expect(!ReadmeConsole.matches(output: "exit 1", expected: ["exit 0"]))
        #expect(!ReadmeConsole.matches(output: "devices 4", expected: ["devices 5"]))
    }

    /// The command as a terminal would show it: standard error in the same stream, in the
    /// package root, `pushgate` on the PATH.
    static func shell(_ command: String) throws -> String {
        let path = CLI.executable.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try CLI.run(["-c", "exec 2>&1\n" + command], environment: ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 },
                                 program: URL(fileURLWithPath: "/bin/bash"))
        return result.stdout
    }
}

/// The `console` blocks of a Markdown file: `$ ` starts a command (a line ending in `\`
/// continues it), the lines up to the next command are what it prints, `…` alone stands
/// for any number of lines.
struct ReadmeConsole {
    struct Step {
        var command: String
        var expected: [String]
    }

    let lines: [String]

    init(path: String) throws {
        lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
    }

    func steps(inSection title: String) -> [Step] {
        guard let start = lines.firstIndex(of: "## " + title) else { return [] }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        var steps: [Step] = []
        var inBlock = false
        var continuing = false
        for line in lines[(start + 1)..<end] {
            if line.hasPrefix("```") {
                inBlock = line == "```console"
                continuing = false
                continue
            }
            guard inBlock else { continue }
            if continuing, var last = steps.popLast() {
                last.command += "\n" + line
                steps.append(last)
                continuing = line.hasSuffix("\\")
            } else if line.hasPrefix("$ ") {
                steps.append(Step(command: String(line.dropFirst(2)), expected: []))
                continuing = line.hasSuffix("\\")
            } else if var last = steps.popLast() {
                last.expected.append(line)
                steps.append(last)
            }
        }
        return steps
    }

    /// What varies from run to run: times, ids, durations.
    static func normalised(_ line: some StringProtocol) -> String {
        var text = String(line)
        for (pattern, replacement) in [
            (#"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"#, "<time>"),
            (#"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, "<uuid>"),
            (#"\d+ ms \(\d+ devices/s\)"#, "<elapsed>"),
        ] {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        while text.last == " " { text.removeLast() }
        return text
    }

    static func matches(output: String, expected: [String]) -> Bool {
        var got = output.components(separatedBy: "\n").map(normalised)
        if got.last == "" { got.removeLast() }
        let want = expected.map(normalised)
        func match(_ g: Int, _ w: Int) -> Bool {
            if w == want.count { return g == got.count }
            if want[w] == "…" { return (g...got.count).contains { match($0, w + 1) } }
            return g < got.count && got[g] == want[w] && match(g + 1, w + 1)
        }
        return match(0, 0)
    }
}
