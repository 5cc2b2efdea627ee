import Foundation
import TestSupport
import Testing

@Suite struct CodegenCLITests {
    static let golden = TestPaths.packageRoot.appendingPathComponent("Tests/PushgateCLITests/Fixtures/codegen/AppRoute.swift.golden")

    /// The typed layer for the shipped table, byte for byte (the engine after it is the
    /// embedded source, checked against the compiled files by CodegenTests). To update:
    /// `.build/debug/pushgate codegen swift | sed '/^\/\/ MARK: - pushgate link engine/,$d' > Tests/PushgateCLITests/Fixtures/codegen/AppRoute.swift.golden`
    @Test func shippedTableMatchesTheGolden() throws {
        let r = try CLI.run(["codegen", "swift"])
        #expect(r.status == 0, "\(r.stderr)")
        let typedLayer = r.stdout.components(separatedBy: "// MARK: - pushgate link engine")[0]
        let expected = try String(contentsOf: Self.golden, encoding: .utf8)
        #expect(typedLayer == expected)
        #expect(r.stdout.contains("// MARK: - pushgate link engine: AppRouteEngine\n"))
        #expect(r.stdout.hasSuffix("// MARK: - end of the pushgate link engine\n"))
    }

    @Test func fingerprintIsTheSameEverywhere() throws {
        let printed = try CLI.run(["routes", "fingerprint"])
        #expect(printed.status == 0)
        let fingerprint = printed.stdout.trimmingCharacters(in: .newlines)
        #expect(fingerprint.utf8.count == 64)
        #expect(try CLI.run(["routes", "fingerprint", "--config", "config/gateway.json"]).stdout == printed.stdout)
        let generated = try CLI.run(["codegen", "swift"]).stdout
        #expect(generated.contains("    public static let tableFingerprint = \"\(fingerprint)\"\n"))
    }

    func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func checkTellsWhetherAFileCameFromTheTable() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("AppRoute.swift").path
        #expect(try CLI.run(["codegen", "swift", "--type", "ShopLink", "--output", file]).status == 0)

        let same = try CLI.run(["codegen", "check", file])
        #expect(same.status == 0)
        #expect(same.stdout.contains("up to date with the route table"))

        // Another table: one more alias host.
        let routes = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/routes.json"), encoding: .utf8)
        let changed = dir.appendingPathComponent("routes.json")
        try routes.replacingOccurrences(of: "\"www.example.com\"]", with: "\"www.example.com\", \"m.example.com\"]")
            .write(to: changed, atomically: true, encoding: .utf8)
        let other = try CLI.run(["codegen", "check", file, "--routes", changed.path])
        #expect(other.status == 1)
        #expect(other.stdout.contains("generated from another route table"))

        // Same table, code edited by hand.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try text.replacingOccurrences(of: "case tooLong", with: "case tooLongEdited").write(toFile: file, atomically: true, encoding: .utf8)
        let edited = try CLI.run(["codegen", "check", file])
        #expect(edited.status == 1)
        #expect(edited.stdout.contains("the code differs"))

        // Not a generated file at all.
        let stray = dir.appendingPathComponent("stray.swift")
        try "let x = 1\n".write(to: stray, atomically: true, encoding: .utf8)
        let notOurs = try CLI.run(["codegen", "check", stray.path])
        #expect(notOurs.status == 2)
        #expect(notOurs.stderr.contains("not a router written by pushgate codegen swift"))
    }

    func table(_ routes: String, passthrough: String = "[]") -> String {
        """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
         "hosts": ["example.com"], "passthroughQuery": \(passthrough), "routes": [\(routes)]}
        """
    }

    /// Tables and options the generator cannot turn into Swift: exit 2, with the place.
    @Test(arguments: [
        ([#"{"name": "order-item", "path": "/a"}"#, #"{"name": "order_item", "path": "/b"}"#], [String](),
         #"routes[1].name: route name "order_item" becomes the Swift case `orderItem`, as routes[0] ("order-item") does"#),
        ([#"{"name": "default", "path": "/a"}"#], [], #"routes[0].name: route name "default" becomes the Swift keyword `default`; rename the route"#),
        ([#"{"name": "url", "path": "/a"}"#], [], "routes[0].name: route name \"url\" becomes `url`, which the generated type uses for a member of its own"),
        ([#"{"name": "a", "path": "/a", "query": {"2fa": "int"}}"#], [], #"routes[0].query.2fa: query key "2fa" does not make a Swift identifier"#),
        ([#"{"name": "a", "path": "/a/:user_id", "params": {"user_id": "int"}, "query": {"user-id": "int"}}"#], [],
         #"routes[0].query.user-id: query key "user-id" becomes the label `userId` of case `a`, as parameter "user_id" does"#),
        ([#"{"name": "a", "path": "/a", "query": {"t": ["x-y", "x_y"]}}"#], [], #"routes[0].query.t: values "x-y" and "x_y" both become the Swift case `xY`"#),
        ([#"{"name": "a", "path": "/a"}"#], ["--type", "class"], #"--type: "class" is a Swift keyword"#),
        ([#"{"name": "a", "path": "/a"}"#], ["--type", "9Lives"], #"--type: "9Lives" is not a Swift identifier"#),
    ])
    func refusesWhatSwiftCannotSay(_ routes: [String], _ options: [String], _ message: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("routes.json")
        try table(routes.joined(separator: ", ")).write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.run(["codegen", "swift", "--routes", file.path] + options)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func anAppWithoutASchemeGetsNoSchemeMember() throws {
        let r = try CLI.run(["codegen", "swift", "--routes", "Tests/PushgateCLITests/Fixtures/codegen/passthrough-only.json", "--type", "Tiny"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("public static let scheme"))
        #expect(r.stdout.contains(#"bundleId: "com.example.tiny", scheme: nil)"#))
        #expect(try CLI.run(["codegen", "swift"]).stdout.contains(#"public static let scheme = "shop""#))
    }

    @Test func appOptionChoosesAnAppOfTheConfiguration() throws {
        let r = try CLI.run(["codegen", "swift", "--app", "shop"])
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"--app: no app named "shop" in config/gateway.json; the apps are "default" [unknownApp]"#), "\(r.stderr)")
        let named = try CLI.run(["codegen", "vectors", "--count", "3", "--app", "default"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout == (try CLI.run(["codegen", "vectors", "--count", "3"])).stdout)
    }

    @Test func vectorsAreTheGatewaysAnswers() throws {
        let r = try CLI.run(["codegen", "vectors", "--count", "50"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 50)
        #expect(lines[0].hasPrefix(#"{"link":""#))
        #expect(lines[0].contains(#","expected":{"ok":true,"#))
        #expect(lines[1].contains(#","expected":{"ok":false,"#))
        #expect(try CLI.run(["codegen", "vectors", "--count", "50"]).stdout == r.stdout)  // seeded
        #expect(try CLI.run(["codegen", "vectors", "--count", "-1"]).status == 2)
    }
}
