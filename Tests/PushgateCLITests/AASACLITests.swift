import Foundation
import TestSupport
import Testing

@Suite struct AASACLITests {
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/PushgateCLITests/Fixtures")

    func fixture(_ name: String) -> String { Self.fixtures.appendingPathComponent(name).path }

    /// The generated file for the shipped config/routes.json is pinned byte for byte.
    @Test func generateMatchesGoldenFile() throws {
        let r = try CLI.run(["aasa", "generate"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let golden = try String(contentsOfFile: fixture("aasa-generated.json"), encoding: .utf8)
        #expect(r.stdout == golden)
    }

    @Test func generatedFileValidatesClean() throws {
        let generated = try CLI.run(["aasa", "generate", "--routes", "config/routes.json"])
        let r = try CLI.run(["aasa", "validate", "-"], stdin: Data(generated.stdout.utf8))
        #expect(r.status == 0)
        #expect(r.stdout == "<stdin>: consistent with the route table (4 routes)\n")
    }

    @Test func missingRouteIsReported() throws {
        let r = try CLI.run(["aasa", "validate", fixture("aasa-missing-help.json")])
        #expect(r.status == 1)
        #expect(r.stdout.contains(#": route help (/help/*): no rule opens "/help/x""#))
        #expect(r.stdout.contains("[routeNotOpened]\n"))
        #expect(r.stdout.hasSuffix(": 1 finding\n"))
    }

    @Test func overbroadFileFindings() throws {
        let r = try CLI.run(["aasa", "validate", fixture("aasa-overbroad.json"), "--json"])
        #expect(r.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["ok"] as? Bool == false)
        let findings = object?["findings"] as? [[String: Any]] ?? []
        #expect(findings.map { $0["code"] as? String } == [
            "ignoredKey", "foreignAppID", "routeExcluded", "unroutedPattern", "unroutedPattern", "unroutedPattern",
        ])
        #expect(findings[2]["route"] as? String == "order")
        #expect(findings[2]["pointer"] as? String == "/applinks/details/0/components/1")
        #expect(findings[5]["example"] as? String == "/")
        #expect(findings[5]["location"] as? String == "applinks.details[0].components[4]")
    }

    @Test func legacyPathsAreValidated() throws {
        let r = try CLI.run(["aasa", "validate", fixture("aasa-legacy-paths.json")])
        #expect(r.status == 1)
        #expect(r.stdout.contains("aasa-legacy-paths.json#/applinks/details/0/paths/0: route help"))
        #expect(r.stdout.contains(#"aasa-legacy-paths.json#/applinks/details/0/paths/1: "/product/?*" opens the app for "/product/xx/y", which no route handles [unroutedPattern]"#))
    }

    @Test func fileOverApplesLimitIsAFinding() throws {
        var text = try String(contentsOfFile: fixture("aasa-generated.json"), encoding: .utf8)
        text += String(repeating: " ", count: 128 * 1024)
        let r = try CLI.run(["aasa", "validate", "-"], stdin: Data(text.utf8))
        #expect(r.status == 1)
        #expect(r.stdout == "<stdin>: the file is \(text.utf8.count) bytes; Apple reads at most 131072 [fileTooLarge]\n"
                + "<stdin>: 1 finding\n")
    }

    @Test func generateWarnsWhenTheTableCannotBeExpressedExactly() throws {
        let dir = try TempDir()
        try dir.write("routes.json", """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"}, "hosts": ["example.com"],
         "routes": [{"name": "files", "path": "/u/:id/files/*", "params": {"id": "int"}}]}
        """)
        let r = try CLI.run(["aasa", "generate", "--routes", dir.path("routes.json")])
        #expect(r.status == 1)
        #expect(r.stdout.contains(#""/": "/u/?*/files/?*""#))
        #expect(r.stderr.contains("warning: the generated file is not exact"))
    }

    @Test func consistentJSON() throws {
        let r = try CLI.run(["aasa", "validate", "--json", fixture("aasa-generated.json")])
        #expect(r.status == 0)
        #expect(r.stdout == #"{"ok":true,"findings":[]}"# + "\n")
    }

    @Test(arguments: [
        ("aasa-invalid-json.json", "aasa-invalid-json.json#/applinks/details/0: line 1, column 27"),
        ("aasa-not-applinks.json", "aasa-not-applinks.json: no \"applinks\": not a universal-links association file [missing]"),
        ("aasa-wrong-type.json", "aasa-wrong-type.json#/applinks/details/0/components/0/exclude: expected true or false"),
        ("no-such-file.json", "cannot open"),
    ])
    func unreadableInputIsStatusTwo(file: String, message: String) throws {
        let r = try CLI.run(["aasa", "validate", fixture(file)])
        #expect(r.status == 2)
        #expect(r.stderr.contains(message))
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [
        ["aasa"], ["aasa", "frobnicate"], ["aasa", "validate"], ["aasa", "generate", "extra"],
        ["aasa", "generate", "--json"], ["aasa", "validate", "a.json", "b.json"],
    ])
    func usageErrors(args: [String]) throws {
        let r = try CLI.run(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains("usage: pushgate aasa"))
    }

    @Test func badRouteTableIsStatusTwo() throws {
        let r = try CLI.run(["aasa", "generate", "--routes", "/nonexistent.json"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("/nonexistent.json"))
    }
}
