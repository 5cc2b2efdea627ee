import Foundation
import Testing

/// The route-table file loader behind every `--routes` option: what it refuses before
/// the JSON is even read, and that content errors name the file and the JSON path.
@Suite struct RouteTableFileCLITests {
    @Test func directoryIsRefused() throws {
        let dir = try TempDir()
        try dir.write("routes.json/placeholder", "")
        let r = try CLI.run(["check-link", "--routes", dir.path("routes.json"), "https://example.com/"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("routes.json: is a directory, expected a JSON file [fileUnreadable]"))
    }

    @Test func oversizedFileIsRefusedWithoutReadingItAll() throws {
        let dir = try TempDir()
        try dir.write("big.json", String(repeating: " ", count: (4 << 20) + 1))
        let r = try CLI.run(["check-link", "--routes", dir.path("big.json"), "https://example.com/"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("big.json: is larger than the 4194304-byte limit for this file [fileTooLarge]"))
    }

    @Test func contentErrorsNameFileAndPath() throws {
        let dir = try TempDir()
        try dir.write("routes.json", """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
         "hosts": ["example.com"],
         "routes": [{"name": "byId", "path": "/p/:id", "params": {"id": "int"}},
                    {"name": "bySlug", "path": "/p/:slug", "params": {"slug": "slug"}}]}
        """)
        let r = try CLI.run(["check-link", "--routes", dir.path("routes.json"), "https://example.com/p/1"])
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"routes.json#/routes/1: ambiguous routes: "byId" (/p/:id) and "bySlug" (/p/:slug) both match "/p/1" and neither is more specific [ambiguousRoutes]"#))
    }

    @Test func hostileFileNamesAreShownEscaped() throws {
        let r = try CLI.run(["check-link", "--routes", "/nonexistent/\u{202E}evil.json", "https://example.com/"])
        #expect(r.status == 2)
        #expect(!r.stderr.unicodeScalars.contains("\u{202E}"))
        #expect(r.stderr.lowercased().contains("\\u202e"))
    }
}
