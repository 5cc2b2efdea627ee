import Foundation
import StrictJSON
import Testing
import TestSupport

/// The `/ui` page in a real browser: Debian's headless Chromium, driven by Selenium from
/// the virtual environment `make browser-env` builds (this test runs it when the browser
/// or the environment is missing, so `swift test` never skips it). Two servers on ephemeral
/// loopback ports, one open and one behind an API key, with the shipped templates plus a
/// hostile one; `Tests/Browser/ui_test.py` runs every case in one browser session and
/// compares what the page shows with the preview API's answers. Screenshots go to
/// `.build/ui-artifacts/`.
@Suite(.serialized) struct PreviewPageBrowserTests {
    static let root = TestPaths.packageRoot
    static let python = root.appendingPathComponent(".build/browser-venv/bin/python")
    static let browserFiles = ["/usr/bin/chromium", "/usr/bin/chromedriver"]

    static func browserReady() -> Bool {
        let fm = FileManager.default
        return fm.isExecutableFile(atPath: python.path) && browserFiles.allSatisfy(fm.isExecutableFile(atPath:))
            && fm.fileExists(atPath: root.appendingPathComponent(".build/browser-venv/.installed").path)
    }

    /// Runs a long blocking child on its own thread, so that it does not hold one of the
    /// few threads of Swift's shared pool that every async test needs for a minute.
    static func offThePool(_ body: @escaping @Sendable () throws -> CLIResult) async throws -> CLIResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func thePageInHeadlessChromium() async throws {
        if !Self.browserReady() {
            let make = try await Self.offThePool { try CLI.run(["-s", "browser-env"], program: URL(fileURLWithPath: "/usr/bin/make")) }
            #expect(make.status == 0, "make browser-env: \(make.stderr)")
        }
        try #require(Self.browserReady(), "Chromium, chromedriver or the Selenium environment is missing after make browser-env")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-ui-\(UUID().uuidString)")
        let templates = folder.appendingPathComponent("templates")
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = Self.root.appendingPathComponent("Templates")
        for name in try FileManager.default.contentsOfDirectory(atPath: shipped.path) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(at: shipped.appendingPathComponent(name), to: templates.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("Tests/Browser/hostile.json"),
                                         to: templates.appendingPathComponent("hostile.json"))

        let key = "ui-test-" + UUID().uuidString.lowercased()
        let hash = try CLI.run(["hash-key", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        func config(_ name: String, keys: String) throws -> String {
            try ServeProcess.dryRunConfig(name, in: folder, templates: templates.path, keys: keys)
        }
        let open = try ServeProcess(config: try config("open", keys: "[]"))
        defer { _ = open.terminate() }
        let keyed = try ServeProcess(config: try config("keyed", keys: #"[{"name": "ui", "sha256": "\#(hash)"}]"#))
        defer { _ = keyed.terminate() }

        let artifacts = Self.root.appendingPathComponent(".build/ui-artifacts")
        let arguments = [Self.root.appendingPathComponent("Tests/Browser/ui_test.py").path,
                         "--open", "http://127.0.0.1:\(open.port)", "--keyed", "http://127.0.0.1:\(keyed.port)",
                         "--key", key, "--artifacts", artifacts.path,
                         "--campaign", Self.root.appendingPathComponent("config/campaigns/order-ready.json").path]
        let run = try await Self.offThePool { try CLI.run(arguments, wrapper: ["/usr/bin/timeout", "300"], program: Self.python) }
        var cases = 0
        for line in run.stdout.split(separator: "\n") where line.hasPrefix("{") {
            guard let result = try? JSONParser().parse(Array(line.utf8)).objectValue else { continue }
            cases += 1
            if result["ok"] != .bool(true) {
                Issue.record("\(result["case"]?.stringValue ?? "?"): \(result["error"]?.stringValue ?? "")")
            }
        }
        #expect(run.status == 0, "ui_test.py exited \(run.status): \(run.stdout.suffix(400)) \(run.stderr.suffix(2000))")
        #expect(cases >= 20, "only \(cases) cases reported: \(run.stderr.suffix(2000))")
        #expect(run.stdout.hasSuffix(" 0 failed\n"))
        for shot in ["lock-order_ready-pl-PL.png", "ui-example.png"] {
            #expect(FileManager.default.fileExists(atPath: artifacts.appendingPathComponent(shot).path), "\(shot) missing")
        }
    }

    /// The page's own files carry no inline script, inline style or event attribute (the
    /// policy would block them; this says so before a browser does).
    @Test func thePageHasNothingInline() throws {
        let html = try String(contentsOf: Self.root.appendingPathComponent("Sources/PreviewPage/Assets/index.html"), encoding: .utf8)
        let script = try String(contentsOf: Self.root.appendingPathComponent("Sources/PreviewPage/Assets/page.js"), encoding: .utf8)
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(html.contains(#"<script src="/ui/page.js" defer></script>"#))
        #expect(!html.contains("style="))
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
        #expect(!html.contains("http://") && !html.contains("https://"))
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('on", "javascript:"] {
            #expect(!script.contains(sink), "page.js uses \(sink)")
        }
    }
}
