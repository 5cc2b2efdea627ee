import Foundation
import StrictJSON
import TestSupport
import Testing

/// `-` for standard input, the quick `send --device --alert`, and `--config` on the
/// commands that read only the route table.
@Suite struct QuickSendAndStdinTests {
    static let env = SendCommandTests.environment()
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "cd", count: 32)

    @Test func aCampaignFromStandardInputIsTheSameAsFromItsFile() throws {
        let file = "config/campaigns/inline-alert.json"
        let bytes = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent(file))
        let fromFile = try CLI.run(["preview", "--campaign", file, "--json"], environment: Self.env)
        let fromStdin = try CLI.run(["preview", "--campaign", "-", "--json"], stdin: bytes, environment: Self.env)
        #expect(fromFile.status == 0 && fromStdin.status == 0)
        // apns-id is random per run; everything else is the same.
        let strip = { (s: String) in s.replacing(/"apns-id":"[0-9a-f-]+"/, with: "") }
        #expect(strip(fromStdin.stdout) == strip(fromFile.stdout))

        let sent = try CLI.run(["send", "--campaign", "-", "--dry-run"], stdin: bytes, environment: Self.env)
        #expect(sent.status == 0)
        #expect(sent.stdout.contains("built          4"))
    }

    @Test func problemsInAStandardInputCampaignNameStdin() throws {
        let r = try CLI.run(["send", "--campaign", "-", "--dry-run"], stdin: Data(#"{"alert": 1, "devices": ["x"]}"#.utf8), environment: Self.env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("<stdin>#/alert: "))
        #expect(r.stderr.contains("[wrongType]"))
        let empty = try CLI.run(["preview", "--campaign", "-"], stdin: Data(), environment: Self.env)
        #expect(empty.status == 1)
        let both = try CLI.run(["send", "--campaign", "-", "--devices", "-"], environment: Self.env)
        #expect(both.status == 2)
        #expect(both.stderr.contains("cannot both read standard input"))
    }

    @Test func devicesFromStandardInput() throws {
        let r = try CLI.run(["send", "--device", Self.tokenA, "--alert", "Hi", "--devices", "-", "--dry-run"],
                            stdin: Data("\(Self.tokenB)\nnot-a-token\n".utf8), environment: Self.env)
        #expect(r.status == 1)
        #expect(r.stdout.contains("devices        3"))
        #expect(r.stderr.contains("<stdin>:2: not a device token"))
    }

    @Test func aQuickDryRunBuildsEachDevicesRequest() throws {
        let r = try CLI.run(["send", "--device", Self.tokenA, "--device", Self.tokenB, "--alert", "Your order is ready",
                             "--deeplink", "https://example.com/product/42", "--dry-run", "--json"], environment: Self.env)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        var tokens: [String] = []
        for line in lines {
            let object = try #require(try JSONParser().parse(String(line)).objectValue)
            #expect(object["result"] == .string("dry-run"))
            tokens.append(try #require(object["token"]?.stringValue))
            let body = try #require(object["request"]?.objectValue?["body"]?.stringValue)
            #expect(body.contains(#""alert":{"body":"Your order is ready"}"#))
            #expect(body.contains(#""deeplink":"https://example.com/product/42""#))
        }
        #expect(Set(tokens) == [Self.tokenA, Self.tokenB])
    }

    @Test func aQuickSendIsCheckedLikeACampaignAndBlamesTheOption() throws {
        let r = try CLI.run(["send", "--device", Self.tokenA, "--device", "abc", "--alert", "Hi",
                             "--deeplink", "https://evil.example.net/x", "--dry-run"], environment: Self.env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("--device #2: too short"))
        #expect(r.stderr.contains("[invalidToken]"))
        #expect(r.stderr.contains("--deeplink: the host \"evil.example.net\" is not listed"))
        #expect(r.stderr.contains("[hostNotAllowed]"))
        #expect(r.stdout.isEmpty, "nothing is sent when the campaign is refused")

        // The same link in a campaign file gets the same code.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("quick-\(UUID().uuidString).json")
        try #"{"alert":"Hi","deeplink":"https://evil.example.net/x","devices":["\#(Self.tokenA)"]}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let campaign = try CLI.run(["send", "--campaign", file.path, "--dry-run"], environment: Self.env)
        #expect(campaign.status == 1)
        #expect(campaign.stderr.contains("#/deeplink: the host \"evil.example.net\" is not listed"))
    }

    @Test(arguments: [
        (["send", "--alert", "Hi"], "a quick send needs --device TOKEN"),
        (["send", "--device", String(repeating: "ab", count: 32)], "a quick send needs --alert TEXT"),
        (["send"], "give --campaign FILE, or --device TOKEN --alert TEXT"),
        (["send", "--campaign", "config/campaigns/inline-alert.json", "--alert", "Hi"], "--alert is for a quick send without --campaign"),
        (["send", "--alert", "a", "--alert", "b", "--device", "x"], "--alert given twice"),
    ])
    func quickSendUsageErrors(_ arguments: [String], _ message: String) throws {
        let r = try CLI.run(arguments, environment: Self.env)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.contains("usage: pushgate send"))
    }

    /// `--config` picks the route table the configuration names, for every command that
    /// reads only the table; the answers are the ones `--routes` gives for the same file.
    @Test(arguments: [
        ["check-link", "https://example.com/product/42"],
        ["aasa", "generate"],
        ["routes", "fingerprint"],
        ["codegen", "vectors", "--count", "4"],
    ])
    func configAndRoutesGiveTheSameTable(_ arguments: [String]) throws {
        let viaConfig = try CLI.run(arguments + ["--config", "config/gateway.json"], environment: Self.env)
        let viaRoutes = try CLI.run(arguments + ["--routes", "config/routes.json"], environment: Self.env)
        #expect(viaConfig.status == 0, "\(viaConfig.stderr)")
        #expect(viaConfig.stdout == viaRoutes.stdout)
        #expect(!viaConfig.stdout.isEmpty)
        let both = try CLI.run(arguments + ["--config", "config/gateway.json", "--routes", "config/routes.json"], environment: Self.env)
        #expect(both.status == 2)
        #expect(both.stderr.contains("give --config or --routes, not both"))
    }

    @Test func aasaValidateAndCheckLinkStdinTakeConfig() throws {
        let generated = try CLI.run(["aasa", "generate", "--config", "config/gateway.json"], environment: Self.env)
        let validated = try CLI.run(["aasa", "validate", "-", "--config", "config/gateway.json"], stdin: Data(generated.stdout.utf8), environment: Self.env)
        #expect(validated.status == 0)
        #expect(validated.stdout.contains("<stdin>: consistent with the route table"))
        let links = try CLI.run(["check-link", "--stdin", "--config", "config/gateway.json"],
                                stdin: Data("https://example.com/product/42\n".utf8), environment: Self.env)
        #expect(links.status == 0)
        #expect(links.stdout.contains(#""ok":true"#))
    }
}
