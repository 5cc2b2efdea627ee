#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

@Suite struct HashKeyCommandTests {
    @Test func hashesFromArgumentAndStdin() throws {
        let key = "0123456789abcdef0123456789abcdef"
        let fromArgument = try CLI.run(["hash-key", key])
        #expect(fromArgument.status == 0)
        // sha256sum <<< -n "0123456789abcdef0123456789abcdef"
        #expect(fromArgument.stdout == "3eb1bd439947eb762998e566ccc2e099c791118b2f40579cc4f7da2b5061b7f9\n")
        let fromStdin = try CLI.run(["hash-key"], stdin: Data((key + "\n").utf8))
        #expect(fromStdin.stdout == fromArgument.stdout)
        #expect(try CLI.run(["hash-key", "short"]).status == 2)
    }

    /// A key that cannot hold 128 random bits is refused (exit 2, nothing on stdout), so a
    /// right key never has to be refused to keep guessing hopeless.
    @Test func refusesKeysThatCannotHold128RandomBits() throws {
        let weak = [String(repeating: "ab", count: 15) + "a",  // 31 hex digits: 124 bits
                    "correcthorsebatterystaple",  // 25 lowercase letters: 117 bits
                    "0123456789abcdef",  // the old 16-byte minimum: 64 bits
                    "pg key with spaces 0123456789abcdef", "ключ-0123456789abcdef0123456789abcdef"]
        for key in weak {
            let r = try CLI.run(["hash-key", key])
            #expect(r.status == 2, "\(key)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.hasPrefix("pushgate hash-key: "), "\(r.stderr)")
        }
        let r = try CLI.run(["hash-key", String(repeating: "ab", count: 15) + "a"])
        #expect(r.stderr.contains("can hold at most 124 random bits and keys need 128"), "\(r.stderr)")
        #expect(r.stderr.contains("openssl rand -hex 32"))
        let strong = ["0123456789ABCDEF0123456789ABCDEF",  // 32 hex digits
                      "q83vEjRWeJq83vEjRWeJqw",  // 22 base64 characters: 131 bits
                      "ui-test-" + UUID().uuidString.lowercased()]
        for key in strong { #expect(try CLI.run(["hash-key", key]).status == 0, "\(key)") }
    }
}

/// Starts the real binary, talks to it, stops it with SIGTERM.
@Suite struct ServeCommandTests {
    static func writeConfig(_ server: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let root = TestPaths.packageRoot.path
        let config = """
        {"routes": "\(root)/config/routes.json", "templates": "\(root)/Templates",
         "apns": {"dryRun": true}, "server": \(server), "storage": {"path": "pushgate.db"}}
        """
        let file = dir.appendingPathComponent("gateway.json")
        try Data(config.utf8).write(to: file)
        return file
    }

    @Test func refusesANonLoopbackAddressWithoutKeys() throws {
        let config = try Self.writeConfig(#"{"listen": "0.0.0.0:0"}"#)
        let result = try CLI.run(["serve", "--config", config.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("not loopback"))
    }

    @Test func reportsEveryBadSetting() throws {
        let config = try Self.writeConfig(#"{"listen": "nowhere", "threads": 0, "colour": "blue"}"#)
        let result = try CLI.run(["serve", "--config", config.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("gateway.json#/server/listen: expected \"HOST:PORT\""))
        #expect(result.stderr.contains("gateway.json#/server/threads: expected an integer from 1 to 256, not \"0\" [invalidValue]"))
        #expect(result.stderr.contains("gateway.json#/server/colour: unknown key \"colour\""))
    }

    /// A loopback socket bound to a free port (listening when asked); the caller closes it.
    static func boundSocket(listening: Bool) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        if listening { _ = listen(fd, 1) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Every stderr line is a JSON object; returns the last one.
    static func lastOfJSONLines(_ stderr: String) -> [String: Any]? {
        let lines = stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        let objects = lines.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        for (line, object) in zip(lines, objects) { #expect(object != nil, "not a JSON object: \(line)") }
        return objects.last ?? nil
    }

    /// Once the configuration is read, failures are log messages in its format too.
    @Test func aStartFailureAfterTheConfigurationIsAJSONLogLine() throws {
        // A port someone else listens on.
        let taken = Self.boundSocket(listening: true)
        defer { close(taken.fd) }
        let config = try Self.writeConfig("{\"listen\": \"127.0.0.1:\(taken.port)\", \"logFormat\": \"json\"}")
        let result = try CLI.run(["serve", "--config", config.path])
        #expect(result.status == 2)
        // Notices (the dry run) and the failure alike.
        let last = Self.lastOfJSONLines(result.stderr)
        #expect(last?["level"] as? String == "error")
        #expect((last?["message"] as? String)?.contains("pushgate serve:") == true)
    }

    /// A whole run in the JSON format: every stderr line from the start-up notices to
    /// "stopped", request lines included (one answered, one refused for its framing, one
    /// libmicrohttpd would have answered itself), is one JSON object.
    @Test func everyLineOfAJSONRunIsAnObject() throws {
        let config = try Self.writeConfig(#"{"listen": "127.0.0.1:0", "logFormat": "json", "requestLog": "stderr"}"#)
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--config", config.path]
        process.currentDirectoryURL = config.deletingLastPathComponent()
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let errors = Pipe.closedOnExec()
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var seen = ""
        var port: Int?
        while port == nil {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: "listening on http://127.0.0.1:") {
                let digits = seen[range.upperBound...].prefix { $0.isNumber }
                if seen[range.upperBound...].dropFirst(digits.count).first != nil { port = Int(digits) }
            }
        }
        let bound = try #require(port, "serve did not start: \(seen)")
        #expect(RawHTTPClient.exchange(port: bound, method: "GET", path: "/healthz", headers: [], body: [])?.status == 200)
        for text in ["GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n b\r\n\r\n",
                     "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n"] {
            let client = try #require(RawHTTPClient(port: bound))
            client.send(text)
            #expect(client.waitForClose(seconds: 5))
        }
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        seen += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = seen.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "not JSON objects: \(lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil })")
        #expect(objects.contains { ($0["message"] as? String)?.hasPrefix("pushgate: listening on") == true })
        #expect(objects.last?["message"] as? String == "pushgate: stopped")
        let statuses = objects.compactMap { $0["status"] as? Int }
        #expect(statuses.filter { $0 == 200 }.count == 2, "\(statuses)")
        #expect(statuses.contains(400) && statuses.contains(505), "\(statuses)")
    }

    /// A storage that cannot be opened, once the format is known, is a JSON line as well.
    @Test func aStorageFailureAtStartIsAJSONLogLine() throws {
        let config = try Self.writeConfig(#"{"listen": "127.0.0.1:0", "logFormat": "json"}"#)
        let text = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: #""path": "pushgate.db""#, with: #""path": "/dev/null/pushgate.db""#)
        try Data(text.utf8).write(to: config)
        let result = try CLI.run(["serve", "--config", config.path])
        #expect(result.status == 2)
        let last = Self.lastOfJSONLines(result.stderr)
        #expect(last?["level"] as? String == "error")
        #expect((last?["message"] as? String)?.contains("/dev/null/pushgate.db") == true)
    }

    @Test func servesAndStopsCleanlyOnSIGTERM() throws {
        // Find a free port, then start the server on it.
        let probe = Self.boundSocket(listening: false)
        let port = probe.port
        close(probe.fd)

        let config = try Self.writeConfig(#"{"listen": "127.0.0.1:\#(port)", "requestLog": "off"}"#)
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--config", config.path]
        let err = Pipe.closedOnExec()
        process.standardError = err
        process.standardOutput = Pipe.closedOnExec()
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let healthy = eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(25)) {
            RawHTTPClient.exchange(port: port, method: "GET", path: "/healthz")?.status == 200
        }
        #expect(healthy)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("listening on http://127.0.0.1:\(port)"))
        #expect(log.contains("stopped"))
    }
}
