import Foundation
import StrictJSON

/// Runs Fixtures/fake_apns.py on an ephemeral loopback port for one test, and reads the
/// JSON lines it logs for every request it answered.
final class FakeAPNs: @unchecked Sendable {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let keyFile = fixtures.appendingPathComponent("test-key.p8").path
    static let teamId = "TEAM123456"
    static let keyId = "KEY1234567"

    let port: Int
    let directory: URL
    private let process: Process
    private let stdin: Pipe

    /// One answer of the fake: `["status": 503, "reason": "ServiceUnavailable", "retryAfter": 1]`.
    typealias Answer = [String: Any]

    /// Always TLS (Apple's way; also, Debian's libcurl 7.88 cannot reuse cleartext HTTP/2).
    init(script: [String: Any] = [:], publicKeyPEM: String? = nil) throws {
        guard let tls = TestTLS.material else { throw FakeError(message: "could not make TLS test certificates with openssl") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptFile = directory.appendingPathComponent("script.json")
        try JSONSerialization.data(withJSONObject: script).write(to: scriptFile)
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
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let text = String(data: line, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw FakeError(message: "fake_apns.py did not print its port")
        }
        self.port = port
    }

    deinit { stop() }

    var url: String { "https://127.0.0.1:\(port)" }
    var caFile: String { TestTLS.material?.caFile ?? "" }

    func stop() {
        guard process.isRunning else { return }
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    /// Every answered request, in the order answered.
    func log() -> [JSONObject] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("log.jsonl").path) else { return [] }
        return data.split(separator: 0x0A).compactMap { try? JSONParser().parse(Array($0)).objectValue }
    }

    struct FakeError: Error { let message: String }
}

extension JSONObject {
    func string(_ key: String) -> String? { self[key]?.stringValue }
    func int(_ key: String) -> Int? { self[key]?.int64Value.map(Int.init) }
    func double(_ key: String) -> Double? { self[key]?.doubleValue }
}
