import Foundation
import StrictJSON
import Testing
import TestSupport

/// The `/ui` console in headless Chromium (`Tests/Browser/console_test.py`): a gateway with
/// three API keys (an admin and two clients) sending to the fake APNs, which fails three
/// tokens (BadDeviceToken, a hostile reason, 410 Unregistered). Campaigns are sent from the page, watched to
/// completed, paused, resumed and cancelled from the page and compared with the API.
extension PreviewPageBrowserTests {
    @Test func theConsoleInHeadlessChromium() async throws {
        if !Self.browserReady() {
            let make = try await Self.offThePool { try CLI.run(["-s", "browser-env"], program: URL(fileURLWithPath: "/usr/bin/make")) }
            #expect(make.status == 0, "make browser-env: \(make.stderr)")
        }
        try #require(Self.browserReady(), "Chromium, chromedriver or the Selenium environment is missing after make browser-env")

        let failing = String(repeating: "ba", count: 32), dead = String(repeating: "de", count: 32)
        let hostile = String(repeating: "ee", count: 32)
        // A reason no APNs sends, kept as sent: the page must show it as text. The ab, ac
        // and ad tokens fail in the screenshots' campaign.
        let fake = try FakeAPNsServer(scriptJSON: """
            {"tokens": {"\(failing)": [{"status": 400, "reason": "BadDeviceToken"}],
                        "\(hostile)": [{"status": 400, "reason": "<img src=x onerror=window.__pwned=1><b>bold</b>"}],
                        "\(dead)": [{"status": 410, "reason": "Unregistered", "timestamp": 1796000000000}],
                        "\(TestTokens.device)": [{"status": 400, "reason": "BadDeviceToken"}],
                        "\(String(repeating: "ac", count: 32))": [{"status": 400, "reason": "DeviceTokenNotForTopic"}],
                        "\(String(repeating: "ad", count: 32))": [{"status": 410, "reason": "Unregistered", "timestamp": 1796100000000}]}}
            """)
        defer { fake.stop() }
        let folder = fake.directory
        let templates = folder.appendingPathComponent("templates")
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        let shipped = Self.root.appendingPathComponent("Templates")
        for name in try FileManager.default.contentsOfDirectory(atPath: shipped.path) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(at: shipped.appendingPathComponent(name), to: templates.appendingPathComponent(name))
        }

        var keys: [String: String] = [:]
        var entries: [String] = []
        for (name, role) in [("ops", "admin"), ("alpha", "client"), ("beta", "client")] {
            let key = "console-\(name)-" + UUID().uuidString.lowercased()
            keys[name] = key
            let hash = try CLI.run(["hash-key", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            entries.append(#"{"name": "\#(name)", "sha256": "\#(hash)", "role": "\#(role)"}"#)
        }
        let config = folder.appendingPathComponent("console.json").path
        try """
        {"topic": "com.example.shop", "routes": "\(Self.root.path)/config/routes.json", "templates": "\(templates.path)",
         "apns": {"url": "\(fake.url)", "caFile": "\(fake.caFile)", "teamId": "\(FakeAPNsServer.teamId)",
                  "keyId": "\(FakeAPNsServer.keyId)", "keyFile": "\(FakeAPNsServer.keyFile)", "connections": 1},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off", "maxBodyBytes": 4194304, "apiKeys": [\(entries.joined(separator: ", "))]},
         "storage": {"path": "\(folder.path)/console.db"},
         "dispatcher": {"inFlight": 200, "claimBatch": 100},
         "guard": {"confirmAbove": 1000}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try ServeProcess(config: config)
        defer { _ = server.terminate() }

        let artifacts = Self.root.appendingPathComponent(".build/ui-artifacts")
        let arguments = [Self.root.appendingPathComponent("Tests/Browser/console_test.py").path,
                         "--base", "http://127.0.0.1:\(server.port)", "--admin-key", keys["ops"] ?? "",
                         "--alpha-key", keys["alpha"] ?? "", "--beta-key", keys["beta"] ?? "",
                         "--failing", failing, "--dead", dead, "--hostile", hostile, "--devices", "20000", "--work", folder.path,
                         "--artifacts", artifacts.path]
        let run = try await Self.offThePool { try CLI.run(arguments, wrapper: ["/usr/bin/timeout", "400"], program: Self.python) }
        var cases = 0
        for line in run.stdout.split(separator: "\n") where line.hasPrefix("{") {
            guard let result = try? JSONParser().parse(Array(line.utf8)).objectValue else { continue }
            if result["measure"] != nil {
                print("console_test.py: \(line)")  // a figure for the record, not a case
                continue
            }
            cases += 1
            if result["ok"] != .bool(true) {
                Issue.record("\(result["case"]?.stringValue ?? "?"): \(result["error"]?.stringValue ?? "")")
            }
        }
        #expect(run.status == 0, "console_test.py exited \(run.status): \(run.stdout.suffix(600)) \(run.stderr.suffix(2000))")
        #expect(cases >= 8, "only \(cases) cases reported: \(run.stderr.suffix(2000))")
        #expect(run.stdout.hasSuffix(" 0 failed\n"))
        // The fake answered every device of the big campaign exactly once.
        let answered = fake.answers()
        #expect(answered.filter { $0.token == failing }.map(\.status) == [400])
        #expect(answered.filter { $0.token == dead }.map(\.status) == [410])
        #expect(answered.filter { $0.token == hostile }.map(\.status) == [400])
    }
}
