import Foundation
import TestSupport
import Testing
import StrictJSON

/// The generated router against the gateway, through the real tools: for each table,
/// `pushgate codegen swift` + `swift-runner` compiled with swiftc (once per table), fed
/// the project's link corpus and 20,000 generated links (half valid, half hostile); its
/// output must equal `pushgate check-link --stdin`'s byte for byte, and every accepted
/// value must round-trip (`--round-trip`). Serialized: one swiftc at a time on a shared machine.
@Suite(.serialized) struct CodegenConformanceTests {
    struct Table: Sendable, CustomTestStringConvertible {
        let routes: String
        let typeName: String
        /// `-O` as the docs tell app teams; the test tables use `-Onone` to keep the suite quick.
        let optimize: Bool
        var testDescription: String { routes }
    }

    static let tables = [
        Table(routes: "config/routes.json", typeName: "AppRoute", optimize: true),
        Table(routes: "Tests/PushgateCLITests/Fixtures/codegen/rich-routes.json", typeName: "RichRoute", optimize: false),
        // No custom scheme: the generated file has no scheme member and refuses every other scheme.
        Table(routes: "Tests/PushgateCLITests/Fixtures/codegen/passthrough-only.json", typeName: "Tiny", optimize: false),
    ]

    /// Every link the project's tests use as input: the WHATWG corpus's inputs, the shipped
    /// samples, and the line-level edge cases of `check-link --stdin`.
    static func corpus() throws -> Data {
        var data = Data()
        let whatwg = TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/urltestdata.json")
        guard case .array(let entries) = try JSONParser().parse(Array(try Data(contentsOf: whatwg))) else {
            Issue.record("corpus is not an array")
            return data
        }
        for entry in entries {
            if let input = entry.objectValue?["input"]?.stringValue { data.append(Data((input + "\n").utf8)) }
        }
        data.append(try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/sample-links.txt")))
        data.append(Data("https://example.com/product/1\r\n\n\r\nshop://help/a/b\ntiny://deal/1\n".utf8))
        data.append(Data([0x68, 0x74, 0x74, 0x70, 0x73, 0x3A, 0x2F, 0x2F, 0xC3, 0x28, 0x0A, 0xFF, 0x0A]))  // invalid UTF-8
        data.append(Data(("https://example.com/help/" + String(repeating: "a", count: 2100) + "\n").utf8))
        data.append(Data(("https://example.com/help/" + String(repeating: "b", count: 4071) + "\r\n").utf8))  // 4096 + CR
        data.append(Data(("https://example.com/help/" + String(repeating: "c", count: 9000) + "\n").utf8))
        data.append(Data("https://example.com/profile".utf8))  // no final LF
        return data
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(arguments: tables)
    func runnerAgreesWithCheckLineForLine(_ table: Table) throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let generated = dir.appendingPathComponent("\(table.typeName).swift"), main = dir.appendingPathComponent("main.swift")
        let gen = try CLI.run(["codegen", "swift", "--routes", table.routes, "--type", table.typeName, "--output", generated.path])
        #expect(gen.status == 0, "\(gen.stderr)")
        let runnerGen = try CLI.run(["codegen", "swift-runner", "--type", table.typeName, "--output", main.path])
        #expect(runnerGen.status == 0, "\(runnerGen.stderr)")

        let compile = try CLI.run(["swiftc", table.optimize ? "-O" : "-Onone", generated.path, main.path, "-o", "runner"],
                                  workingDirectory: dir, program: URL(fileURLWithPath: "/usr/bin/env"))
        try #require(compile.status == 0, "swiftc failed:\n\(compile.stderr)")
        #expect(!compile.stderr.contains("warning:"), "swiftc warnings:\n\(compile.stderr)")

        // (a) the corpus, (b) 10,000 valid and 10,000 hostile generated links.
        var input = try Self.corpus()
        let vectors = try CLI.run(["codegen", "vectors", "--count", "20000", "--seed", "16", "--routes", table.routes])
        #expect(vectors.status == 0)
        var valid = 0
        for line in vectors.stdout.split(separator: "\n") {
            guard let object = try JSONParser().parse(Array(line.utf8)).objectValue, let link = object["link"]?.stringValue else {
                Issue.record("bad vector line: \(line)")
                continue
            }
            if object["expected"]?.objectValue?["ok"]?.boolValue == true { valid += 1 }
            input.append(Data((link + "\n").utf8))
        }
        #expect(valid >= 10_000, "the valid half must all be accepted")

        let expected = try CLI.run(["check-link", "--stdin", "--routes", table.routes], stdin: input)
        let got = try CLI.run(["--round-trip"], stdin: input, workingDirectory: dir, program: dir.appendingPathComponent("runner"))
        #expect(got.stderr.isEmpty, "round trip failures:\n\(got.stderr.prefix(2000))")
        #expect(got.status == expected.status)
        let e = expected.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let g = got.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(e.count == g.count)
        #expect(e.count > 20_800)
        var differing = 0
        for (x, y) in zip(e, g) where x != y {
            differing += 1
            if differing <= 5 { Issue.record("differs:\n gateway: \(x)\n runner:  \(y)") }
        }
        #expect(differing == 0)
    }
}
