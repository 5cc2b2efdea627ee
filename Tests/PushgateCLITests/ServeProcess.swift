import Foundation
import StrictJSON
import TestSupport

/// `pushgate serve` as a child process, for tests that must kill it for real.
final class ServeProcess {
    let process = Process()
    let port: Int
    private let stderrLines = Pipe()

    /// Starts the server and waits until it says where it listens.
    init(config: String) throws {
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--config", config]
        process.currentDirectoryURL = CLI.packageRoot
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
        // Keep draining stderr so the child never blocks on a full pipe.
        handle.readabilityHandler = { $0.availableData.isEmpty ? ($0.readabilityHandler = nil) : () }
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

    func request(_ method: String, _ path: String, json: [UInt8]? = nil, headers: [(String, String)] = []) -> RawResponse? {
        var all = headers
        if json != nil { all.append(("Content-Type", "application/json")) }
        return RawHTTPClient.exchange(port: port, method: method, path: path, headers: all, body: json ?? [])
    }

    func object(_ method: String, _ path: String) -> JSONObject? {
        guard let response = request(method, path) else { return nil }
        return (try? JSONParser().parse(response.body))?.objectValue
    }

    struct ServeError: Error { let message: String }
}

/// The apns helper's fake APNs (Tests/APNsTests/Fixtures/fake_apns.py) over TLS with a
/// throwaway CA, logging one JSON line per answered request.
final class FakeAPNsProcess {
    static let fixtures = CLI.packageRoot.appendingPathComponent("Tests/APNsTests/Fixtures")
    static let keyFile = fixtures.appendingPathComponent("test-key.p8").path

    let directory: URL
    let port: Int
    let caFile: String
    private let process = Process()
    private let stdin = Pipe()

    init(script: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-crash-\(UUID().uuidString)")
        directory = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("ext.cnf"), atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Self.openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "1", "-subj", "/CN=crash test CA"])
        try Self.openssl(["req"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost"])
        try Self.openssl(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                          "-CAcreateserial", "-out", path("server.pem"), "-days", "1", "-extfile", path("ext.cnf")])
        caFile = path("ca.pem")
        try script.write(toFile: path("script.json"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.fixtures.appendingPathComponent("fake_apns.py").path, "--log", path("log.jsonl"),
                             "--script", path("script.json"), "--key-file", Self.keyFile,
                             "--team-id", "TEAM123456", "--key-id", "KEY1234567",
                             "--tls-cert", path("server.pem"), "--tls-key", path("server.key")]
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
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw ServeProcess.ServeError(message: "fake_apns.py did not print its port")
        }
        self.port = port
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// (token, status) of every answered request, in order.
    func answers() -> [(token: String, status: Int)] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("log.jsonl").path) else { return [] }
        return data.split(separator: 0x0A).compactMap { line in
            guard let object = (try? JSONParser().parse(Array(line)))?.objectValue,
                  let token = object["token"]?.stringValue, let status = object["status"]?.int64Value else { return nil }
            return (token, Int(status))
        }
    }

    func answeredCount() -> Int {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("log.jsonl").path) else { return 0 }
        return data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ServeProcess.ServeError(message: "openssl \(arguments[0]) failed") }
    }
}
