import Foundation
import Testing

@Suite struct CheckLinkCLITests {
    @Test func acceptedPrintsCanonicalURL() throws {
        let r = try CLI.run(["check-link", "HTTPS://WWW.example.com/product/42?utm_source=mail&ref=spring"])
        #expect(r.status == 0)
        #expect(r.stdout == "https://example.com/product/42?ref=spring&utm_source=mail\n")
        #expect(r.stderr.isEmpty)
    }

    @Test func acceptedJSONShape() throws {
        let r = try CLI.run(["check-link", "--json", "shop://product/42?variant=3"])
        #expect(r.status == 0)
        #expect(r.stdout == #"{"ok":true,"canonical":"https://example.com/product/42?variant=3","route":"product","params":{"id":"42"},"query":{"variant":"3"}}"# + "\n")
    }

    @Test func rejectedPrintsCodeAndMessage() throws {
        let r = try CLI.run(["check-link", "https://example.com.evil.net/product/1"])
        #expect(r.status == 1)
        #expect(r.stdout.hasPrefix("hostNotAllowed: "))
        #expect(r.stdout.contains(#""example.com.evil.net""#))
    }

    @Test func rejectedJSONShape() throws {
        let r = try CLI.run(["check-link", "javascript:alert(1)", "--json"])
        #expect(r.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["ok"] as? Bool == false)
        let error = object?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "schemeNotAllowed")
        #expect((error?["message"] as? String)?.isEmpty == false)
        #expect(Set(object?.keys.map { $0 } ?? []) == ["ok", "error"])
    }

    /// Hostile input is quoted escaped in the human message and in JSON: no raw bidi or
    /// control characters reach the terminal.
    @Test func hostileInputNeverPrintedRaw() throws {
        for args in [["check-link", "https://exa\u{202E}mple.com/x"], ["check-link", "--json", "https://exa\u{1B}[31mple.com/x"]] {
            let r = try CLI.run(args)
            #expect(r.status == 1)
            #expect(!r.stdout.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" })
        }
    }

    @Test(arguments: [
        ["check-link"],
        ["check-link", "https://example.com/profile", "https://example.com/profile"],
        ["check-link", "--stdin", "https://example.com/profile"],
        ["check-link", "--frobnicate", "https://example.com/profile"],
        ["check-link", "--routes"],
    ])
    func usageErrors(args: [String]) throws {
        let r = try CLI.run(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains("usage: pushgate check-link"))
        #expect(r.stdout.isEmpty)
    }

    @Test func missingRouteTableIsConfigurationError() throws {
        let r = try CLI.run(["check-link", "--routes", "/nonexistent/routes.json", "https://example.com/profile"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("/nonexistent/routes.json"))
    }

    @Test func routesDefaultToConfigInTheWorkingDirectory() throws {
        let dir = try TempDir()
        let missing = try CLI.run(["check-link", "https://example.com/profile"], workingDirectory: dir.url)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("config/routes.json"))
        try dir.write("config/routes.json", """
        {"app": {"teamId": "T1T2T3T4T5", "bundleId": "com.example.a", "scheme": "s"}, "hosts": ["a.example"],
         "routes": [{"name": "home", "path": "/home"}]}
        """)
        let r = try CLI.run(["check-link", "https://a.example/home"], workingDirectory: dir.url)
        #expect(r.status == 0)
        #expect(r.stdout == "https://a.example/home\n")
    }

    @Test func invalidRouteTableIsConfigurationError() throws {
        let dir = try TempDir()
        try dir.write("bad.json", #"{"app": {}, "hosts": [], "routes": []}"#)
        let r = try CLI.run(["check-link", "--routes", dir.path("bad.json"), "https://example.com/profile"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("bad.json"))
    }
}

/// A temporary directory removed when the value goes away.
final class TempDir {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }
}
