import Foundation
import StrictJSON
import Testing
import TestSupport

/// docs/tour.md's recipe for a campaign in parts (split, a curl per part, the start with
/// the count), run as written against a `serve` on the shipped configuration (a dry run),
/// with parts of 10 lines instead of a million.
@Suite struct CampaignPartsRecipeTests {
    /// The `sh` block of docs/tour.md that creates a campaign with `?parts=true`.
    static func recipe() throws -> String {
        let tour = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/tour.md"), encoding: .utf8)
        let blocks = tour.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "\n```").first ?? "" }
        return try #require(blocks.first { $0.contains("parts=true") }, "docs/tour.md lost its recipe for campaigns in parts")
    }

    @Test func theTourRecipeFillsStartsAndSendsACampaignInParts() throws {
        let dir = try TempDir()
        let server = try ServeProcess(config: "config/gateway.json", environment: [
            "PUSHGATE_STORAGE_PATH": dir.path("parts.db"), "PUSHGATE_SERVER_LISTEN": "127.0.0.1:0",
        ])
        defer { _ = server.terminate() }
        let tokens = (0..<25).map { String(format: "%064x", 0xabc000 + $0) }
        try (tokens.joined(separator: "\n") + "\n").write(toFile: dir.path("tokens.txt"), atomically: true, encoding: .utf8)
        let recipe = try Self.recipe()
        #expect(recipe.contains("split -l 1000000 "))
        let script = recipe.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(server.port)")
            .replacingOccurrences(of: "split -l 1000000 ", with: "split -l 10 ")
        let result = try CLI.run(["-c", "set -u\n" + script], workingDirectory: dir.url, program: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(result.stderr)")

        // Three receipts, one a line (the curl output has no newline of its own), then the
        // started campaign.
        let printed = result.stdout.replacingOccurrences(of: "}{", with: "}\n{").split(separator: "\n").map(String.init)
        let objects = try printed.map { try #require(try JSONParser().parse(Array($0.utf8)).objectValue, "\($0)") }
        #expect(objects.count == 4, "\(result.stdout)")
        #expect(objects.prefix(3).map { $0["devices"] } == [.number("10"), .number("10"), .number("5")])
        #expect(objects.prefix(3).map { $0["first_index"] } == [.number("0"), .number("10"), .number("20")])
        let started = try #require(objects.last)
        #expect(started["status"] == .string("sending") || started["status"] == .string("completed"))
        #expect(started["devices"] == .number("25"))

        let id = try #require(started["id"]?.stringValue)
        let done = try eventuallyBlocking(timeout: .seconds(60)) {
            let answer = try CLI.run(["-s", "http://127.0.0.1:\(server.port)/v1/campaigns/\(id)?per_page=1"], program: URL(fileURLWithPath: "/usr/bin/curl"))
            let summary = try JSONParser().parse(Array(answer.stdout.utf8)).objectValue
            return summary?["status"] == .string("completed") && summary?["counts"]?.objectValue?["dry-run"] == .number("25")
        }
        #expect(done)
    }
}
