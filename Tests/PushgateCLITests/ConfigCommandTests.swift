import Foundation
import StrictJSON
import TestSupport
import Testing

/// `pushgate config check|print`, `PUSHGATE_<SECTION>_<KEY>` overrides, `PUSHGATE_CONFIG`
/// and `serve --listen`, through the real binary.
@Suite struct ConfigCommandTests {
    /// The test process's environment without any PUSHGATE_ variable, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHGATE_") }.merging(extra) { $1 }
    }

    /// A configuration folder: gateway.json beside a copy of the shipped route table and
    /// templates, so relative paths resolve inside it.
    static func folder(_ gateway: String) throws -> TempDir {
        let dir = try TempDir()
        try dir.write("conf/gateway.json", gateway)
        try dir.write("conf/routes.json", String(decoding: try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/routes.json")), as: UTF8.self))
        try dir.write("Templates/.keep", "")
        return dir
    }

    @Test func threeMistakesAreThreeDiagnosticsInOneRun() throws {
        let dir = try Self.folder(#"{"topic": "shop", "server": {"threads": 0, "colour": 1}, "apns": {"dryRun": true}}"#)
        let r = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(r.status == 2)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(r.stderr)")
        #expect(lines.contains { $0.hasSuffix("conf/gateway.json#/topic: \"shop\" is not a bundle id: reverse-DNS, e.g. com.example.app (A-Z a-z 0-9 - in dot-separated parts) [invalidValue]") })
        #expect(lines.contains { $0.hasSuffix("conf/gateway.json#/server/threads: expected an integer from 1 to 256, not \"0\" [invalidValue]") })
        #expect(lines.contains { $0.contains("conf/gateway.json#/server/colour: unknown key \"colour\"") && $0.hasSuffix("[unknownKey]") })
        #expect(lines.last == "pushgate config: 3 problems in the configuration")
        // serve reports the same three, at once.
        let serve = try CLI.run(["serve", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(serve.status == 2)
        #expect(serve.stderr.split(separator: "\n").count == 3)
    }

    @Test func theShippedConfigurationChecksAndPrints() throws {
        let check = try CLI.run(["config", "check"], environment: Self.environment())
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout == "config/gateway.json: ok (4 routes, APNs dry run, listen 127.0.0.1:8080)\n")
        let print = try CLI.run(["config", "print"], environment: Self.environment())
        #expect(print.status == 0)
        let effective = try JSONParser().parse(print.stdout).objectValue
        #expect(effective?["server"]?.objectValue?["threads"] == .number("2"), "defaults are shown")
        #expect(effective?["routes"] == .string("config/routes.json"), "paths are shown resolved")
    }

    /// One setting of each section from the environment, seen by `config print`.
    @Test func environmentOverridesASettingOfEachSection() throws {
        let dir = try Self.folder(#"{"apns": {"dryRun": true}, "webhook": {"url": "https://hooks.example.com/x", "secret": "from-the-file-0123456789"}}"#)
        let env = Self.environment([
            "PUSHGATE_TOPIC": "com.example.other",
            "PUSHGATE_APNS_CONNECTIONS": "3",
            "PUSHGATE_SERVER_LISTEN": "127.0.0.1:9999",
            "PUSHGATE_STORAGE_PATH": "/tmp/elsewhere.db",
            "PUSHGATE_DISPATCHER_CLAIM_BATCH": "42",
            "PUSHGATE_WEBHOOK_SECRET": "from-the-environment-0123",
            "PUSHGATE_SERVER_API_KEYS": #"[{"name": "ops", "sha256": "\#(String(repeating: "ab", count: 32))"}]"#,
        ])
        let r = try CLI.run(["config", "print", "--config", dir.path("conf/gateway.json")], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let effective = try #require(try JSONParser().parse(r.stdout).objectValue)
        #expect(effective["topic"] == .string("com.example.other"))
        #expect(effective["apns"]?.objectValue?["connections"] == .number("3"))
        let server = effective["server"]?.objectValue
        #expect(server?["listen"] == .string("127.0.0.1:9999"))
        #expect(server?["apiKeys"]?.arrayValue?.first?.objectValue?["sha256"] == .string("(redacted)"))
        #expect(effective["storage"]?.objectValue?["path"] == .string("/tmp/elsewhere.db"))
        #expect(effective["dispatcher"]?.objectValue?["claimBatch"] == .number("42"))
        #expect(effective["webhook"]?.objectValue?["secret"] == .string("(redacted)"))
        #expect(!r.stdout.contains("from-the-"), "secrets never printed")
    }

    /// `server.trustedProxies`: every bad item named with its place and why; the variable
    /// takes JSON; `config print` shows the ranges as read.
    @Test func trustedProxiesAreCheckedItemByItem() throws {
        let dir = try Self.folder(#"{"apns": {"dryRun": true}, "server": {"trustedProxies": ["10.0.0.0/8", "10.1.0.0/8", "proxy.lan", "2001:db8::/129", 7, "::1", "::1", "0.0.0.0/0", "::/0"]}}"#)
        let r = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(r.status == 2)
        #expect(r.stderr.contains("conf/gateway.json#/server/trustedProxies/1: item 1: 10.1.0.0/8 has bits set past the prefix; the range starts at 10.0.0.0/8"), "\(r.stderr)")
        #expect(r.stderr.contains(#"conf/gateway.json#/server/trustedProxies/2: item 2: "proxy.lan" is not an IPv4 or IPv6 address"#))
        #expect(r.stderr.contains(#"conf/gateway.json#/server/trustedProxies/3: item 3: the prefix length after "/" must be a whole number from 0 to 128 for an IPv6 address"#))
        #expect(r.stderr.contains("conf/gateway.json#/server/trustedProxies/4: item 4: expected an address or CIDR range as a string, found a number [wrongType]"))
        #expect(r.stderr.contains("conf/gateway.json#/server/trustedProxies/6: item 6: ::1 is listed twice [invalidValue]"))
        #expect(r.stderr.contains("conf/gateway.json#/server/trustedProxies/7: item 7: 0.0.0.0/0 trusts every address, so any client could name its own"))
        #expect(r.stderr.contains("conf/gateway.json#/server/trustedProxies/8: item 8: ::/0 trusts every address"))
        #expect(r.stderr.hasSuffix("pushgate config: 7 problems in the configuration\n"), "\(r.stderr)")

        // A proxy in front needs keys: without them every request it passes on may be anyone's.
        let proxies = #"["127.0.0.1", "fd00::/8", "::ffff:10.0.0.0/104"]"#
        let keyless = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")],
                                  environment: Self.environment(["PUSHGATE_SERVER_TRUSTED_PROXIES": proxies]))
        #expect(keyless.status == 2)
        #expect(keyless.stderr.contains("refusing trustedProxies with no apiKeys configured"), "\(keyless.stderr)")
        let fromVariable = try CLI.run(["config", "print", "--config", dir.path("conf/gateway.json")],
                                       environment: Self.environment(["PUSHGATE_SERVER_TRUSTED_PROXIES": proxies,
                                                                      "PUSHGATE_SERVER_API_KEYS": #"[{"name": "ops", "sha256": "\#(String(repeating: "ab", count: 32))"}]"#]))
        #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
        let server = try #require(try JSONParser().parse(fromVariable.stdout).objectValue?["server"]?.objectValue)
        #expect(server["trustedProxies"] == .array([.string("127.0.0.1"), .string("fd00::/8"), .string("10.0.0.0/8")]))
        let badVariable = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")],
                                      environment: Self.environment(["PUSHGATE_SERVER_TRUSTED_PROXIES": "10.0.0.0/8"]))
        #expect(badVariable.status == 2)
        #expect(badVariable.stderr.contains("environment variable PUSHGATE_SERVER_TRUSTED_PROXIES: expected JSON text"), "\(badVariable.stderr)")
        let shipped = try CLI.run(["config", "print"], environment: Self.environment())
        #expect(try JSONParser().parse(shipped.stdout).objectValue?["server"]?.objectValue?["trustedProxies"] == .array([]), "default: none")
    }

    @Test func aBadOverrideNamesTheVariable() throws {
        let env = Self.environment(["PUSHGATE_SERVER_LISTEN": "everywhere", "PUSHGATE_STORAGE_SYNCHRONOUS": "sometimes",
                                    "PUSHGATE_APNS_KEY_FILE": "no-such-key.p8"])
        let r = try CLI.run(["config", "check"], environment: env)
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"environment variable PUSHGATE_SERVER_LISTEN: expected "HOST:PORT" with an IP literal"#))
        #expect(r.stderr.contains(#"environment variable PUSHGATE_STORAGE_SYNCHRONOUS: expected "full" or "normal", not "sometimes" [invalidValue]"#))
        #expect(r.stderr.contains(#"environment variable PUSHGATE_APNS_KEY_FILE: the keyFile "no-such-key.p8" (relative to the working directory) does not exist or cannot be read [fileNotFound]"#))
        #expect(!r.stderr.contains("gateway.json#/apns/keyFile"), "a variable's problem is not blamed on the file")
    }

    @Test func aVariableNoSettingReadsIsReported() throws {
        let r = try CLI.run(["config", "check"], environment: Self.environment(["PUSHGATE_SERVER_LISTN": "127.0.0.1:1", "PUSHGATE_BENCH_RUNS": "3"]))
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("environment variable PUSHGATE_SERVER_LISTN: no setting reads this variable"))
        #expect(r.stderr.contains("[unknownKey]"))
        #expect(!r.stderr.contains("PUSHGATE_BENCH_RUNS"), "variables outside the settings' namespaces are not settings")
    }

    @Test func pushgateConfigGivesThePathAndMissingFilesSayWhereTheyWereLooked() throws {
        let dir = try Self.folder(#"{"routes": "tables/routes.json", "apns": {"dryRun": true}}"#)
        let r = try CLI.run(["config", "check"], environment: Self.environment(["PUSHGATE_CONFIG": dir.path("conf/gateway.json")]))
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"conf/gateway.json#/routes: the route table "tables/routes.json" ("#))
        #expect(r.stderr.contains("conf/tables/routes.json: relative paths are relative to the folder of "))
        #expect(r.stderr.contains("[fileNotFound]"))
        // --config wins over PUSHGATE_CONFIG.
        let shipped = try CLI.run(["config", "check", "--config", "config/gateway.json"],
                                  environment: Self.environment(["PUSHGATE_CONFIG": dir.path("conf/gateway.json")]))
        #expect(shipped.status == 0, "\(shipped.stderr)")
    }

    @Test func aCopiedConfigurationFolderWorksFromAnywhere() throws {
        let dir = try Self.folder(#"{"apns": {"dryRun": true}}"#)
        let r = try CLI.run(["config", "print", "--config", dir.path("conf/gateway.json")],
                            workingDirectory: FileManager.default.temporaryDirectory, environment: Self.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(dir.path("conf/routes.json")))
    }

    @Test func serveListenIsCheckedAndBlamedOnTheOption() throws {
        let bad = try CLI.run(["serve", "--listen", "anywhere"], environment: Self.environment())
        #expect(bad.status == 2)
        #expect(bad.stderr.contains(#"pushgate serve: --listen: expected "HOST:PORT" with an IP literal"#))
        let exposed = try CLI.run(["serve", "--listen", "0.0.0.0:0"], environment: Self.environment())
        #expect(exposed.status == 2)
        #expect(exposed.stderr.contains("--listen: refusing to listen on 0.0.0.0, which is not loopback, with no apiKeys configured [invalidValue]"))
        let fromEnvironment = try CLI.run(["serve"], environment: Self.environment(["PUSHGATE_SERVER_LISTEN": "0.0.0.0:0"]))
        #expect(fromEnvironment.status == 2)
        #expect(fromEnvironment.stderr.contains("environment variable PUSHGATE_SERVER_LISTEN: refusing to listen on 0.0.0.0"))
    }

    @Test func templatesAndRouteTableProblemsAreReportedWithTheConfiguration() throws {
        let dir = try Self.folder(#"{"apns": {"dryRun": true}}"#)
        try dir.write("Templates/bad.json", #"{"strings": {"titel": "x"}}"#)
        try dir.write("conf/routes.json", #"{"app": {"teamId": "short", "bundleId": "com.x.y", "scheme": "s"}, "hosts": ["a.com"], "routes": [], "colour": 1}"#)
        let r = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(r.status == 2)
        #expect(r.stderr.contains("conf/routes.json#/colour: unknown key \"colour\""))
        #expect(r.stderr.contains("conf/routes.json#/app/teamId: team ID \"short\" must be 10 characters of A-Z and 0-9 [invalidValue]"))
        #expect(r.stderr.contains("conf/routes.json#/routes: there must be at least one route [invalidValue]"))
        // Templates are checked once the configuration itself loads.
        try dir.write("conf/routes.json", String(decoding: try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/routes.json")), as: UTF8.self))
        let templates = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(templates.status == 2)
        #expect(templates.stderr.contains("Templates/bad.json#/strings/titel: unknown key \"titel\"; expected one of: title, subtitle, body [unknownKey]"))
        #expect(templates.stderr.contains("Templates/bad.json#/strings/body: missing: the default body [missing]"))
    }

    /// A minimal configuration outside the repository: no `templates` named and no folder at
    /// the default place. It starts with no templates; a campaign naming one is refused
    /// with `unknownTemplate`. A folder the configuration names must exist.
    @Test func aConfigurationWithoutTemplatesStartsWithNone() throws {
        let dir = try TempDir()
        try dir.write("conf/routes.json", String(decoding: try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/routes.json")), as: UTF8.self))
        try dir.write("conf/gateway.json", #"{"apns": {"dryRun": true}, "server": {"listen": "127.0.0.1:0", "requestLog": "off"}, "storage": {"path": "gateway.db"}}"#)
        let config = dir.path("conf/gateway.json")
        let check = try CLI.run(["config", "check", "--config", config], environment: Self.environment())
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("ok (4 routes, no templates, APNs dry run"), "\(check.stdout)")
        let printed = try CLI.run(["config", "print", "--config", config], environment: Self.environment())
        #expect(!printed.stdout.contains("\"templates\""), "config print names a folder that is not used: \(printed.stdout)")
        let campaign = #"{"template": "order_ready", "devices": ["0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"]}"#
        let preview = try CLI.run(["preview", "--config", config, "--campaign", "-"], stdin: Data(campaign.utf8), environment: Self.environment())
        #expect(preview.status == 1)
        #expect(preview.stdout.contains("template: no template named \"order_ready\" [unknownTemplate]"), "\(preview.stdout)\(preview.stderr)")
        let inline = #"{"alert": {"body": "Hi"}, "devices": ["0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"]}"#
        #expect(try CLI.run(["send", "--config", config, "--campaign", "-"], stdin: Data(inline.utf8), environment: Self.environment()).status == 0)
        let server = try ServeProcess(config: config, environment: ["PUSHGATE_STORAGE_PATH": dir.path("conf/gateway.db")])
        defer { _ = server.terminate() }
        let templates = try #require(server.object("GET", "/v1/templates"))
        #expect(templates["templates"]?.arrayValue?.isEmpty == true, "\(templates)")
        // Named and missing stays an error.
        try dir.write("conf/gateway.json", #"{"templates": "tpl", "apns": {"dryRun": true}}"#)
        let named = try CLI.run(["config", "check", "--config", config], environment: Self.environment())
        #expect(named.status == 2)
        #expect(named.stderr.contains("conf/gateway.json#/templates: the templates folder \"tpl\"") && named.stderr.contains("[fileNotFound]"), "\(named.stderr)")
    }

    @Test func unknownSubcommandsAreUsageErrors() throws {
        #expect(try CLI.run(["config"]).status == 2)
        #expect(try CLI.run(["config", "show"]).status == 2)
        #expect(try CLI.run(["config", "check", "--colour"]).status == 2)
        #expect(try CLI.run(["config", "--help"]).status == 0)
    }
}

extension ConfigCommandTests {
    /// An API key's unknown member gets the one reader's wording and code, placed in the
    /// file, or on the variable when the list came from `PUSHGATE_SERVER_API_KEYS`.
    @Test func anAPIKeysUnknownMemberIsReportedLikeEveryOther() throws {
        let hash = String(repeating: "ab", count: 32)
        let dir = try Self.folder(#"{"topic": "com.example.shop", "server": {"apiKeys": [{"name": "ops", "sha256": "\#(hash)", "rol": "admin"}]}}"#)
        let r = try CLI.run(["config", "check", "--config", dir.path("conf/gateway.json")], environment: Self.environment())
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"conf/gateway.json#/server/apiKeys/0/rol: unknown key "rol"; expected one of: name, sha256, rateLimit, apps, role [unknownKey]"#),
                "\(r.stderr)")
        let env = try CLI.run(["config", "check"], environment: Self.environment([
            "PUSHGATE_SERVER_API_KEYS": #"[{"name": "ops", "sha256": "\#(hash)", "rol": "admin"}]"#]))
        #expect(env.status == 2)
        #expect(env.stderr.contains(#"environment variable PUSHGATE_SERVER_API_KEYS: unknown key "rol""#) && env.stderr.contains("[unknownKey]"),
                "\(env.stderr)")
    }
}
