import Foundation
import StrictJSON
import Testing
import TestSupport

/// The OpenAPI document against the server it describes: schemathesis (pinned in
/// `Tests/API/requirements.txt`, in the virtual environment `make api-env` builds; this
/// test runs it when the environment is missing, so `swift test` never skips it) with
/// every check, a fixed seed and a bounded number of cases per operation
/// (`Tests/API/schemathesis.toml`). Every phase runs against a server behind an API key
/// (and `ignored_auth` sees what happens with a wrong one or none); the examples and the coverage phase
/// (every documented bound and pattern, each side of it) run against a loopback one
/// without keys, whose document declares no security. A scheduled campaign made first
/// gives the progress, pause, resume and cancel operations a real id. The three runs go
/// side by side, each against its own server, as three processes of one worker each:
/// the CPython 3.11 of Debian 12 can fail parsing in two threads at once ("AST
/// constructor recursion depth mismatch"), which hypothesis does while generating.
@Suite(.serialized) struct OpenAPIConformanceTests {
    static let root = TestPaths.packageRoot
    static let schemathesis = root.appendingPathComponent(".build/api-venv/bin/schemathesis")

    static func environmentReady() -> Bool {
        FileManager.default.isExecutableFile(atPath: schemathesis.path)
            && FileManager.default.fileExists(atPath: root.appendingPathComponent(".build/api-venv/.installed").path)
    }

    @Test func schemathesisFindsNothing() async throws {
        if !Self.environmentReady() {
            let make = try await PreviewPageBrowserTests.offThePool { try CLI.run(["-s", "api-env"], program: URL(fileURLWithPath: "/usr/bin/make")) }
            #expect(make.status == 0, "make api-env: \(make.stderr)")
        }
        try #require(Self.environmentReady(), "the schemathesis environment is missing after make api-env")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = "openapi-test-" + UUID().uuidString.lowercased()
        let hash = try CLI.run(["hash-key", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        func config(_ name: String, keys: String, server: String = "") throws -> String {
            try ServeProcess.dryRunConfig(name, in: folder, templates: Self.root.appendingPathComponent("Templates").path, keys: keys, server: server)
        }
        // No rate limit in the way of a fast client (the limiter has tests of its own).
        let keys = #"[{"name": "openapi", "sha256": "\#(hash)", "rateLimit": {"perSecond": 100000, "burst": 100000}}]"#
        let keyed = try ServeProcess(config: try config("keyed", keys: keys))
        defer { _ = keyed.terminate() }
        let open = try ServeProcess(config: try config("open", keys: "[]"))
        defer { _ = open.terminate() }
        // The check that sends wrong keys (ignored_auth) expects 401 to each: a server of
        // its own, whose failed-authentication limit it cannot reach.
        let wrongKeys = try ServeProcess(config: try config("wrong-keys", keys: keys,
                                                             server: #", "failedAuthenticationLimit": {"perSecond": 1000, "burst": 100000}"#))
        defer { _ = wrongKeys.terminate() }

        let runs: [(server: ServeProcess, authorization: String?, options: [String], strict: Bool)] = [
            (keyed, "Bearer \(key)", ["--checks", "all", "--exclude-checks", "ignored_auth"], true),
            (open, nil, ["--checks", "all", "--phases", "examples,coverage"], true),
            (wrongKeys, "Bearer \(key)", ["--checks", "ignored_auth", "--phases", "examples,fuzzing", "--max-examples", "3"], false),
        ]
        var started: [(mode: String, strict: Bool, result: Task<CLIResult, any Error>)] = []
        for run in runs {
            let id = try Self.scheduledCampaign(port: run.server.port, authorization: run.authorization)
            try Self.registerActivity(port: run.server.port, authorization: run.authorization)
            var arguments = ["--config-file", Self.root.appendingPathComponent("Tests/API/schemathesis.toml").path,
                             "run", "http://127.0.0.1:\(run.server.port)/openapi.json",
                             "--seed", "20261201", "--workers", "1", "--no-color"] + run.options
            if let authorization = run.authorization { arguments += ["--header", "Authorization: \(authorization)"] }
            var environment = ProcessInfo.processInfo.environment
            environment["PUSHGATE_CAMPAIGN_ID"] = id
            let (given, variables) = (arguments, environment)
            // Each in a folder of its own: schemathesis keeps a cache in its working directory.
            let directory = folder.appendingPathComponent("run-\(started.count)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let mode = (run.authorization == nil ? "without keys " : "with a key ") + run.options.joined(separator: " ")
            started.append((mode, run.strict, Task {
                try await PreviewPageBrowserTests.offThePool {
                    try CLI.run(given, workingDirectory: directory, environment: variables, wrapper: ["/usr/bin/timeout", "400"],
                                program: Self.schemathesis)
                }
            }))
        }
        for (mode, strict, task) in started {
            let result = try await task.value
            #expect(result.status == 0, "schemathesis (\(mode)) exited \(result.status):\n\(result.stdout.suffix(6000))\n\(result.stderr.suffix(1000))")
            #expect(result.stdout.contains(" passed"), "schemathesis (\(mode)) ran nothing: \(result.stdout.suffix(2000))")
            // Nothing found means no warning either (operations never reached, data mostly
            // rejected…), except in the run whose wrong keys trip the limiter on purpose.
            if strict {
                #expect(!result.stdout.contains("WARNINGS"), "schemathesis (\(mode)) warned:\n\(result.stdout.suffix(3000))")
            }
        }
    }

    /// An update token for the activity the Live Activity operations are run on
    /// (`openapi-activity` in schemathesis.toml), so they reach more than 404.
    static func registerActivity(port: Int, authorization: String?) throws {
        let body = #"{"kind": "update", "activity_id": "openapi-activity", "token": "\#(String(repeating: "cd", count: 32))"}"#
        var headers = [("Content-Type", "application/json")]
        if let authorization { headers.append(("Authorization", authorization)) }
        let response = try #require(RawHTTPClient.exchange(port: port, method: "POST", path: "/v1/live-activities/tokens", headers: headers, body: Array(body.utf8)))
        #expect(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
    }

    /// A campaign scheduled a day ahead, so pause, resume and cancel find it running.
    static func scheduledCampaign(port: Int, authorization: String?) throws -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let sendAt = formatter.string(from: Date(timeIntervalSinceNow: 86_400))
        let body = #"{"alert": {"title": "Your order is ready"}, "send_at": "\#(sendAt)", "devices": ["\#(TestTokens.device)"]}"#
        var headers = [("Content-Type", "application/json")]
        if let authorization { headers.append(("Authorization", authorization)) }
        let response = try #require(RawHTTPClient.exchange(port: port, method: "POST", path: "/v1/campaigns", headers: headers, body: Array(body.utf8)))
        #expect(response.status == 202, "\(String(decoding: response.body, as: UTF8.self))")
        let answer = try JSONParser().parse(response.body)
        return try #require(answer.objectValue?["id"]?.stringValue)
    }
}
