import Foundation
import StrictJSON
import TestSupport
import Testing

@Suite struct CampaignsCommandTests {
    /// A configuration in a fresh folder whose database does not exist yet.
    func freshConfig() throws -> (config: String, database: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-campaigns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let root = TestPaths.packageRoot.path
        let config = folder.appendingPathComponent("gateway.json").path
        try """
        {"routes": "\(root)/config/routes.json", "templates": "\(root)/Templates", "apns": {"dryRun": true},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off"}, "storage": {"path": "data/pushgate.db"}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        return (config, folder.appendingPathComponent("data/pushgate.db").path)
    }

    @Test func noDatabaseMeansNoCampaignsAndCreatesNothing() throws {
        let (config, database) = try freshConfig()
        let r = try CLI.run(["campaigns", "--config", config])
        #expect(r.status == 0)
        #expect(r.stdout == "no campaigns\n")
        #expect(!FileManager.default.fileExists(atPath: database))
        let json = try CLI.run(["campaigns", "--config", config, "--json"])
        #expect(json.stdout == "{\"campaigns\":[],\"next\":null}\n")
    }

    @Test func listsWhatTheServerAccepted() throws {
        let (config, _) = try freshConfig()
        let server = try ServeProcess(config: config)
        let body = Array(#"{"alert":{"body":"Hi"},"devices":["\#(TestTokens.device)"]}"#.utf8)
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: body))
        #expect(accepted.status == 202)
        let id = try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)
        #expect(server.terminate() == 0)
        let text = try CLI.run(["campaigns", "--config", config])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("ID "))
        #expect(text.stdout.contains(id))
        let json = try CLI.run(["campaigns", "--config", config, "--json"])
        let list = try #require(try JSONParser().parse(Array(json.stdout.utf8)).objectValue?["campaigns"]?.arrayValue)
        #expect(list.first?.objectValue?["id"] == .string(id))
        #expect(list.first?.objectValue?["devices"] == .number("1"))
    }

    /// SQLite is one process's store: a second `serve` refuses to start, while the
    /// read-only `campaigns` works next to the running one.
    @Test func aSecondServeOnTheSameDatabaseExits2NamingTheFirst() throws {
        let (config, _) = try freshConfig()
        let server = try ServeProcess(config: config)
        let body = Array(#"{"alert":{"body":"Hi"},"devices":["\#(String(repeating: "cd", count: 32))"]}"#.utf8)
        let accepted = try #require(server.request("POST", "/v1/campaigns", json: body))
        let id = try #require(try JSONParser().parse(accepted.body).objectValue?["id"]?.stringValue)

        let second = try CLI.run(["serve", "--config", config])
        #expect(second.status == 2)
        let host = ProcessInfo.processInfo.hostName
        #expect(second.stderr.contains("storage in use by pid \(server.process.processIdentifier) on "), "\(second.stderr)")
        #expect(second.stderr.contains(" since 20"), "\(second.stderr) (\(host))")
        #expect(!second.stderr.contains("listening"))

        let listed = try CLI.run(["campaigns", "--config", config])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(id))
        #expect(server.object("GET", "/v1/campaigns/\(id)")?["id"]?.stringValue == id, "the first server still answers")
        #expect(server.terminate() == 0)
        // Once it has stopped, a new server starts.
        let next = try ServeProcess(config: config)
        #expect(next.terminate() == 0)
    }

    @Test func badArgumentsAreUsageErrors() throws {
        #expect(try CLI.run(["campaigns", "--limit", "0"]).status == 2)
        #expect(try CLI.run(["campaigns", "extra"]).status == 2)
        #expect(try CLI.run(["campaigns", "--config", "/nonexistent/gateway.json"]).status == 2)
    }
}
