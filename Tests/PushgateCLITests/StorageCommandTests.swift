import Foundation
import StrictJSON
import TestSupport
import Testing

/// `pushgate storage migrate|status` on SQLite (the PostgreSQL side runs in
/// PostgresFleetTests): what the status says of leases left in flight and of free space.
@Suite struct StorageCommandTests {
    @Test func statusOnSQLiteSaysLeasesComeBackAtStartAndRetentionGivesPagesBack() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = TestPaths.packageRoot.path
        let config = folder.appendingPathComponent("gateway.json").path
        try """
        {"routes": "\(root)/config/routes.json", "templates": "\(root)/Templates", "apns": {"dryRun": true},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off"}, "storage": {"path": "\(folder.path)/pushgate.db"}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let none = try CLI.run(["storage", "status", "--config", config])
        #expect(none.status == 0 && none.stdout.contains("no database yet"), "\(none.stdout)")
        let migrated = try CLI.run(["storage", "migrate", "--config", config])
        #expect(migrated.status == 0 && migrated.stdout.contains("(sqlite)"), "\(migrated.stderr)")
        let text = try CLI.run(["storage", "status", "--config", config])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("backend: sqlite\n"))
        #expect(text.stdout.contains("in flight when serve stops or dies: given back when serve starts again on this file\n"))
        #expect(text.stdout.contains("pages free; retention gives free pages back (incremental vacuum)\n"), "\(text.stdout)")
        let json = try CLI.run(["storage", "status", "--config", config, "--json"])
        let shown = try #require(try JSONParser().parse(Array(json.stdout.utf8)).objectValue)
        #expect(shown["in_flight_recovery"]?.stringValue == "start")
        let space = try #require(shown["space"]?.objectValue)
        #expect(space["reclaim"]?.stringValue == "incremental_vacuum")
        #expect((space["pages"]?.int64Value ?? 0) > 0 && space["free_pages"]?.int64Value != nil)
    }
}
