import Foundation
import StrictJSON
import Synchronization
import TestSupport

/// `pushgate serve` as a child process, for tests that must kill it for real.
final class ServeProcess {
    let process = Process()
    let port: Int
    private let stderrLines = Pipe.closedOnExec()
    private let written = CapturedText()

    /// Everything the server wrote to stderr so far, start-up lines included.
    var stderrText: String { written.value }

    /// Starts the server and waits until it says where it listens. `environment`: variables
    /// added to the test's own (`PUSHGATE_…` overrides).
    init(config: String, environment: [String: String] = [:]) throws {
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--config", config]
        process.currentDirectoryURL = TestPaths.packageRoot
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = stderrLines
        try process.run()
        var seen = ""
        var port: Int?
        let handle = stderrLines.fileHandleForReading
        while port == nil {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            written.append(chunk)
            if let range = seen.range(of: "listening on http://127.0.0.1:") {
                let digits = seen[range.upperBound...].prefix { $0.isNumber }
                if seen[range.upperBound...].dropFirst(digits.count).first != nil { port = Int(digits) }
            }
        }
        guard let port else {
            process.terminate()
            throw ServeError(message: "pushgate serve did not start: \(seen)")
        }
        self.port = port
        // Keep draining stderr so the child never blocks on a full pipe, and keep what it says.
        handle.readabilityHandler = { [written] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil } else { written.append(chunk) }
        }
    }

    /// A test that fails half-way (a `#require` that throws) leaves no server behind.
    deinit {
        if process.isRunning { kill9() }
    }

    func kill9() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func terminate() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The server as any client reaches it (the suites' one `APIClient`).
    var client: LiveClient { LiveClient(port: port) }

    /// `json` is sent as application/json; `body` with the caller's own Content-Type header.
    /// `path` may carry its query already encoded (it goes on the wire as written).
    func request(_ method: String, _ path: String, json: [UInt8]? = nil, headers: [(String, String)] = [], body: [UInt8]? = nil) -> RawResponse? {
        var all = headers.map { (name: $0.0, value: $0.1) }
        if json != nil { all.append(("Content-Type", "application/json")) }
        return try? client.send(APIRequest(method, path, headers: all, body: json ?? body ?? []))
    }

    func object(_ method: String, _ path: String) -> JSONObject? {
        guard let response = request(method, path) else { return nil }
        return (try? JSONParser().parse(response.body))?.objectValue
    }

    struct ServeError: Error { let message: String }

    /// A dry-run gateway on an ephemeral loopback port with the shipped route table, the
    /// templates in `templates` and these API keys (JSON), its database in `folder`;
    /// written to `folder/NAME.json`, whose path is returned.
    /// `server`: more members of the server section.
    static func dryRunConfig(_ name: String, in folder: URL, templates: String, keys: String, server: String = "") throws -> String {
        let path = folder.appendingPathComponent("\(name).json").path
        try """
        {"topic": "com.example.shop", "routes": "\(TestPaths.packageRoot.path)/config/routes.json", "templates": "\(templates)",
         "apns": {"dryRun": true, "environment": "sandbox"},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off", "apiKeys": \(keys)\(server)},
         "storage": {"path": "\(folder.path)/\(name).db"}}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// The shared fake APNs, as the crash test reads its log.
typealias FakeAPNsProcess = FakeAPNsServer

extension FakeAPNsServer {
    convenience init(script: String, tokenUpdateWindow: Int? = nil) throws {
        try self.init(scriptJSON: script, tokenUpdateWindow: tokenUpdateWindow)
    }

    /// A gateway configuration sending to this fake with the fixture key, written next to
    /// its log; returns its path. `storage`: the section's JSON (default: the SQLite file
    /// `database`); `dispatcher`: more members of that section; `webhook`: that section's JSON.
    func gatewayConfig(database: String, inFlight: Int, claimBatch: Int = 20, storage: String? = nil, dispatcher: String = "",
                       maxBodyBytes: Int = 4194304, webhook: String? = nil, name: String = "gateway.json", apns: String = "") throws -> String {
        let root = TestPaths.packageRoot.path
        let text = """
        {"topic": "com.example.shop", "routes": "\(root)/config/routes.json", "templates": "\(root)/Templates",
         "apns": {"url": "https://127.0.0.1:\(port)", "caFile": "\(caFile)", "teamId": "\(Self.teamId)",
                  "keyId": "\(Self.keyId)", "keyFile": "\(Self.keyFile)", "connections": 1\(apns)},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off", "maxBodyBytes": \(maxBodyBytes)},
         "storage": \(storage ?? "{\"path\": \"\(database)\"}"),
         "dispatcher": {"inFlight": \(inFlight), "claimBatch": \(claimBatch)\(dispatcher)}\(webhook.map { ", \"webhook\": " + $0 } ?? "")}
        """
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// (token, status) of every answered request, in order.
    func answers() -> [(token: String, status: Int)] {
        log().compactMap { object in
            guard let token = object.string("token"), let status = object.int("status") else { return nil }
            return (token, status)
        }
    }
}

/// Text a child writes, appended as it arrives (from the pipe's reading thread).
final class CapturedText: Sendable {
    private let text = Mutex("")

    func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var value: String { text.withLock { $0 } }
}
