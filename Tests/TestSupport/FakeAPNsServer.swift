import Foundation
import StrictJSON
import Synchronization

/// Runs Tests/APNsTests/Fixtures/fake_apns.py (python3-h2 over TLS) on an ephemeral
/// loopback port, and reads the JSON lines it logs for every request it answered.
public final class FakeAPNsServer: @unchecked Sendable {
    // @unchecked: the process and pipes are set in init and only stopped once.
    public static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("APNsTests/Fixtures")
    public static let keyFile = fixtures.appendingPathComponent("test-key.p8").path
    public static let teamId = "TEAM123456"
    public static let keyId = "KEY1234567"

    /// A signing key the fake knows, with its team and the topics it may push to.
    public struct Key: Sendable {
        public var teamId: String
        public var keyId: String
        public var keyFile: String
        public var topics: [String]

        public init(teamId: String, keyId: String, keyFile: String, topics: [String]) {
            self.teamId = teamId
            self.keyId = keyId
            self.keyFile = keyFile
            self.topics = topics
        }

        /// A new P-256 key in PKCS#8 PEM (Apple's `.p8` form), made with openssl, in `folder`.
        public static func generate(in folder: URL, name: String) throws -> String {
            let file = folder.appendingPathComponent(name + ".p8").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", file]
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TestSupportError(message: "openssl genpkey failed") }
            return file
        }
    }

    public let port: Int
    public let directory: URL
    private let process: Process
    private let stdin: Pipe
    private let stdout: Pipe
    private var pendingOutput = Data()
    /// How far `answeredCount` has read the log, and the lines it counted there.
    private let counted = Mutex<(offset: UInt64, lines: Int)>((0, 0))

    /// `scriptJSON` tells the fake how to answer (see fake_apns.py); `publicKeyPEM`
    /// replaces the fixture key it verifies provider tokens with; `tokenUpdateWindow`
    /// turns on Apple's rule against replacing a key's token more often than that
    /// (Apple's is 1200 s).
    ///
    /// `keys`: several signing keys, like APNs: each token is verified with the key its
    /// `kid` names (its `iss` must be that key's team), and a topic not among the key's is
    /// answered 400 `TopicDisallowed`.
    public init(scriptJSON: String = "{}", publicKeyPEM: String? = nil, tokenUpdateWindow: Int? = nil,
                keys: [Key] = []) throws {
        guard let tls = TestTLS.material else { throw TestSupportError(message: "could not make TLS test certificates with openssl") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptFile = directory.appendingPathComponent("script.json")
        try scriptJSON.write(to: scriptFile, atomically: true, encoding: .utf8)
        var arguments = [Self.fixtures.appendingPathComponent("fake_apns.py").path,
                         "--log", directory.appendingPathComponent("log.jsonl").path,
                         "--script", scriptFile.path, "--team-id", Self.teamId, "--key-id", Self.keyId]
        if let publicKeyPEM {
            let file = directory.appendingPathComponent("public.pem")
            try publicKeyPEM.write(to: file, atomically: true, encoding: .utf8)
            arguments += ["--public-key", file.path]
        } else {
            arguments += ["--key-file", Self.keyFile]
        }
        arguments += ["--tls-cert", tls.certFile, "--tls-key", tls.keyFile]
        if let tokenUpdateWindow { arguments += ["--token-update-window", String(tokenUpdateWindow)] }
        if !keys.isEmpty {
            let file = directory.appendingPathComponent("keys.json")
            var w = JSONWriter()
            w.array { w in
                for key in keys {
                    w.object { w in
                        w.member("teamId", key.teamId)
                        w.member("keyId", key.keyId)
                        w.member("keyFile", key.keyFile)
                        w.member("topics", array: { w in for topic in key.topics { w.value(.string(topic)) } })
                    }
                }
            }
            try Data(w.bytes).write(to: file)
            arguments += ["--keys", file.path]
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        stdin = Pipe.closedOnExec()
        stdout = Pipe.closedOnExec()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        guard let port = Int(Self.readLine(stdout, &pendingOutput)) else {
            process.terminate()
            throw TestSupportError(message: "fake_apns.py did not print its port")
        }
        self.port = port
    }

    private static func readLine(_ pipe: Pipe, _ pending: inout Data) -> String {
        while !pending.contains(0x0A) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
        }
        let end = pending.firstIndex(of: 0x0A) ?? pending.endIndex
        let line = String(decoding: pending[..<end], as: UTF8.self)
        pending = Data(pending[min(end + 1, pending.endIndex)...])
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops listening and cuts every connection: APNs becomes unreachable (connections
    /// are refused) until `openPort()`.
    public func closePort() { command("close") }

    /// Answers nothing from now on, keeping every answer (streams stay open) until
    /// `releaseAnswers`: a test decides when streams free up, with no timing window.
    public func holdAnswers() { command("hold") }
    public func releaseAnswers() { command("release") }

    /// Listens again on the same port.
    public func openPort() { command("open") }

    /// From now on answers 403 `reason` to every request whose provider token verifies (Apple
    /// refusing the key); nil accepts the key again.
    public func refuseKey(_ reason: String?) { command("key " + (reason ?? "ok")) }
    /// Refuses (or, with nil, accepts again) one signing key only.
    public func refuseKey(_ reason: String?, keyId: String) { command("keyid \(keyId) " + (reason ?? "ok")) }

    private func command(_ name: String) {
        stdin.fileHandleForWriting.write(Data((name + "\n").utf8))
        while process.isRunning, Self.readLine(stdout, &pendingOutput) != "ok " + name {}
    }

    deinit { stop() }

    public var url: String { "https://127.0.0.1:\(port)" }
    public var caFile: String { TestTLS.material?.caFile ?? "" }

    public func stop() {
        guard process.isRunning else { return }
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    /// Every answered request, in the order answered.
    public func log() -> [JSONObject] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("log.jsonl").path) else { return [] }
        return data.split(separator: 0x0A).compactMap { try? JSONParser().parse(Array($0)).objectValue }
    }

    /// Every complete request it received, answered or not (refused, reset, hung), in
    /// arrival order: `token`, `connection`, `stream`, `action` (answer/refuse/reset/hang).
    public func received() -> [JSONObject] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("received.jsonl").path) else { return [] }
        return data.split(separator: 0x0A).compactMap { try? JSONParser().parse(Array($0)).objectValue }
    }

    /// How many requests it has answered so far (cheap: counts lines).
    public func answeredCount() -> Int {
        // Reads only what was appended since the last call: a test polling a 100,000-line
        // log every few milliseconds must not reread it whole each time.
        counted.withLock { state in
            guard let handle = FileHandle(forReadingAtPath: directory.appendingPathComponent("log.jsonl").path) else { return state.lines }
            defer { try? handle.close() }
            guard (try? handle.seek(toOffset: state.offset)) != nil, let data = try? handle.readToEnd() else { return state.lines }
            state.offset += UInt64(data.count)
            state.lines += data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
            return state.lines
        }
    }
}

extension FakeAPNsServer {
    /// The distinct provider tokens (as digests) the fake was sent, in order of first use.
    public func tokensSeen() -> [String] {
        var seen: [String] = []
        for entry in log() { if let sha = entry.string("tokenSha"), !seen.contains(sha) { seen.append(sha) } }
        return seen
    }
}

extension JSONObject {
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    public func int(_ key: String) -> Int? { self[key]?.int64Value.map(Int.init) }
    public func double(_ key: String) -> Double? { self[key]?.doubleValue }
}
