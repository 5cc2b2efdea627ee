#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StrictJSON
import Testing
import TestSupport

/// `pushgate serve` behind Debian's h2o, run with the shipped config/h2o-proxy.conf (only
/// its addresses, ports and paths replaced): TLS at h2o, `server.trustedProxies` naming
/// h2o's address. Clients are told apart by their loopback source address (127.0.0.2,
/// 127.0.0.3, …, and ::1).
@Suite(.serialized) struct ReverseProxyTests {
    /// h2o on a free loopback port (127.0.0.1 and ::1) in front of `upstream`.
    final class H2O {
        let port: Int
        private var process = Process()

        init(config template: String, upstream: Int, tls: TestTLS.Material, folder: TempDir) throws {
            var lastError = ""
            for _ in 0..<3 {
                let (fd, port) = ServeCommandTests.boundSocket(listening: false)
                close(fd)
                let config = try ReverseProxyTests.replacing(template, [
                    ("host: 0.0.0.0", "host: 127.0.0.1"), ("host: \"::\"", "host: \"::1\""), ("port: 443", "port: \(port)"),
                    ("/etc/h2o/pushgate.crt", tls.certFile), ("/etc/h2o/pushgate.key", tls.keyFile),
                    ("/var/log/h2o/pushgate-error.log", folder.path("h2o-error.log")),
                    ("http://127.0.0.1:8080/", "http://127.0.0.1:\(upstream)/"),
                ])
                try folder.write("h2o.conf", config)
                process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/h2o")
                process.arguments = ["-c", folder.path("h2o.conf")]
                process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
                process.standardError = FileHandle(forWritingAtPath: "/dev/null")
                try process.run()
                for _ in 0..<200 where process.isRunning && !Self.accepts(port) { usleep(25_000) }
                if process.isRunning && Self.accepts(port) {
                    self.port = port
                    return
                }
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
                lastError = (try? String(contentsOfFile: folder.path("h2o-error.log"), encoding: .utf8)) ?? ""
            }
            throw ServeProcess.ServeError(message: "h2o did not start: \(lastError)")
        }

        /// SIGTERM asks h2o for a graceful stop, which waits for its upstream connections;
        /// after two seconds it is killed.
        deinit {
            guard process.isRunning else { return }
            process.terminate()
            for _ in 0..<40 where process.isRunning { usleep(50_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        static func accepts(_ port: Int) -> Bool { RawHTTPClient(port: port) != nil }
    }

    /// Each (old, new): `old` must be in `text` exactly once, so the file and the test
    /// cannot drift apart silently.
    static func replacing(_ text: String, _ pairs: [(String, String)]) throws -> String {
        var text = text
        for (old, new) in pairs {
            guard text.components(separatedBy: old).count == 2 else {
                throw ServeProcess.ServeError(message: "config/h2o-proxy.conf: expected \(old) exactly once")
            }
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    struct Answer {
        let status: Int
        let body: String
    }

    /// One curl run: the same request to `count` URLs over one connection from the
    /// source address `from`; the answers in order.
    static func curl(_ url: String, from source: String, headers: [String] = [], count: Int = 1, extra: [String] = [],
                     caFile: String) throws -> [Answer] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        var arguments = ["-sS", "--cacert", caFile, "--interface", source, "--max-time", "30"] + extra
        for header in headers { arguments += ["-H", header] }
        // Each answer: its body, then a marker line with the status.
        arguments += ["-w", "\n@@status %{http_code}\n"]
        for _ in 0..<count { arguments.append(url) }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var answers: [Answer] = []
        var body = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("@@status ") {
                answers.append(Answer(status: Int(line.dropFirst(9)) ?? -1, body: body))
                body = ""
            } else {
                body += line
            }
        }
        return answers
    }

    /// Request lines of the server's log (JSON), by path and the client that asked.
    static func logLines(_ serve: ServeProcess) -> [JSONObject] {
        serve.stderrText.split(separator: "\n").compactMap { line in
            guard line.contains("\"request_id\"") else { return nil }
            return try? JSONParser().parse(Array(line.utf8)).objectValue
        }
    }

    /// No proxy: twenty wrong keys, then the right key from the same address is served.
    @Test func aRightKeyAfterTwentyWrongOnesWithoutAProxy() throws {
        let tls = try #require(TestTLS.material)
        let folder = try TempDir()
        let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let hash = try CLI.run(["hash-key", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try ServeProcess.dryRunConfig("direct", in: folder.url, templates: TestPaths.packageRoot.path + "/Templates",
                                                   keys: #"[{"name": "live", "sha256": "\#(hash)"}]"#)
        let serve = try ServeProcess(config: config)
        let base = "http://127.0.0.1:\(serve.port)/v1/routes"
        let wrong = try Self.curl(base, from: "127.0.0.1", headers: ["Authorization: Bearer wrong-key-0123456789abcdef0123456789"],
                                  count: 20, caFile: tls.caFile)
        #expect(wrong.map(\.status) == Array(repeating: 401, count: 10) + Array(repeating: 429, count: 10))
        let right = try Self.curl(base, from: "127.0.0.1", headers: ["Authorization: Bearer \(key)"], count: 2, caFile: tls.caFile)
        #expect(right.map(\.status) == [200, 200])
        #expect(try Self.curl(base, from: "127.0.0.1", headers: ["Authorization: Bearer wrong"], caFile: tls.caFile).map(\.status) == [429],
                "wrong keys are still throttled")
        #expect(serve.terminate() == 0)
    }

    @Test func throughH2O() async throws {
        let tls = try #require(TestTLS.material)
        let folder = try TempDir()
        let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let hash = try CLI.run(["hash-key", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try folder.write("gateway.json", """
        {"topic": "com.example.shop", "routes": "\(TestPaths.packageRoot.path)/config/routes.json", "templates": "\(TestPaths.packageRoot.path)/Templates",
         "apns": {"dryRun": true, "environment": "sandbox"},
         "server": {"listen": "127.0.0.1:0", "trustedProxies": ["127.0.0.1"],
                    "apiKeys": [{"name": "live", "sha256": "\(hash)"}]},
         "storage": {"path": "\(folder.path("gateway.db"))"}}
        """)
        let serve = try ServeProcess(config: folder.path("gateway.json"))
        let template = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("config/h2o-proxy.conf"), encoding: .utf8)
        let h2o = try H2O(config: template, upstream: serve.port, tls: tls, folder: folder)
        let proxy = "https://127.0.0.1:\(h2o.port)"
        func curl(_ path: String, from source: String, key: String? = nil, headers: [String] = [], count: Int = 1,
                  base: String? = nil, extra: [String] = []) throws -> [Answer] {
            try Self.curl((base ?? proxy) + path, from: source, headers: (key.map { ["Authorization: Bearer \($0)"] } ?? []) + headers,
                          count: count, extra: extra, caFile: tls.caFile)
        }

        // The probes answer through the proxy.
        #expect(try curl("/healthz", from: "127.0.0.9").map(\.status) == [200])
        #expect(try curl("/readyz", from: "127.0.0.9").map(\.status) == [200])

        // A client with a wrong key is throttled; another's right key through the same
        // proxy keeps getting 200, and so does the first client's own right key.
        let wrong = try curl("/v1/routes", from: "127.0.0.2", key: "wrong-key-0123456789abcdef0123456789", count: 12)
        #expect(wrong.map(\.status) == Array(repeating: 401, count: 10) + [429, 429])
        #expect(wrong.last?.body.contains("too many failed authentication attempts") == true)
        #expect(try curl("/v1/routes", from: "127.0.0.3", key: key, count: 3).map(\.status) == [200, 200, 200])
        #expect(try curl("/v1/routes", from: "127.0.0.2", key: key).map(\.status) == [200])
        #expect(try curl("/v1/routes", from: "127.0.0.3", key: "wrong").map(\.status) == [401], "its own first failure")

        // A forged X-Forwarded-For through the proxy is the leftmost hop: h2o appends the
        // real client, which is the rightmost untrusted one.
        #expect(try curl("/healthz", from: "127.0.0.4", headers: ["X-Forwarded-For: 198.51.100.66"]).map(\.status) == [200])
        // Straight to pushgate from an untrusted peer: the header is not read, and guessing
        // behind changing forged addresses is still one client's guessing.
        let direct = "http://127.0.0.1:\(serve.port)"
        #expect(try curl("/healthz", from: "127.0.0.5", headers: ["X-Forwarded-For: 198.51.100.77"], base: direct).map(\.status) == [200])
        var forged: [Int] = []
        for i in 0..<11 {
            forged += try curl("/v1/routes", from: "127.0.0.6", key: "wrong", headers: ["X-Forwarded-For: 198.51.100.\(i)"], base: direct).map(\.status)
        }
        #expect(forged == Array(repeating: 401, count: 10) + [429])

        // Malformed forwarding headers from the proxy (the client's part of them) are a 400.
        let malformed = try curl("/v1/routes", from: "127.0.0.7", key: key, headers: ["X-Forwarded-For: not-an-address"])
        #expect(malformed.map(\.status) == [400])
        #expect(malformed.first?.body.contains(#""code":"invalidForwarding""#) == true, "\(malformed.first?.body ?? "")")
        #expect(malformed.first?.body.contains(#""header":"X-Forwarded-For""#) == true)
        let unquoted = try curl("/healthz", from: "127.0.0.7", headers: ["Forwarded: for=[2001:db8::1]"])
        #expect(unquoted.map(\.status) == [400])
        #expect(unquoted.first?.body.contains(#""header":"Forwarded""#) == true)
        let conflicting = try curl("/healthz", from: "127.0.0.7", headers: [#"Forwarded: for="[2001:db8::1]:4711""#])
        #expect(conflicting.map(\.status) == [400], "h2o wrote X-Forwarded-For, the client Forwarded: they disagree")
        #expect(conflicting.first?.body.contains(#""code":"conflictingForwarding""#) == true)

        // IPv6: a client on ::1 (h2o listens there too) is logged as ::1.
        let v6 = try curl("/v1/routes", from: "::1", key: key, base: "https://localhost:\(h2o.port)",
                          extra: ["--resolve", "localhost:\(h2o.port):[::1]"])
        #expect(v6.map(\.status) == [200])

        // The request log names the real client, and the proxy as the peer.
        var lines: [JSONObject] = []
        #expect(await eventually(timeout: .seconds(20)) {
            lines = Self.logLines(serve)
            return lines.filter { $0["path"]?.stringValue == "/v1/routes" }.count >= 12 + 3 + 1 + 1 + 11 + 1 + 1
        })
        func clients(_ path: String, status: Int) -> [String] {
            lines.filter { $0["path"]?.stringValue == path && $0.int("status") == status }.compactMap { $0["client"]?.stringValue }
        }
        // Every line but the direct ones (127.0.0.5, .6) and the refused ones (named by the proxy).
        let peers = Set(lines.filter { !["127.0.0.5", "127.0.0.6", "127.0.0.1"].contains($0["client"]?.stringValue ?? "") }
            .map { $0["peer"]?.stringValue ?? "-" })
        #expect(peers == ["127.0.0.1"], "every proxied line names h2o as the peer: \(peers)")
        #expect(clients("/v1/routes", status: 401).sorted() == Array(repeating: "127.0.0.2", count: 10) + ["127.0.0.3"]
                + Array(repeating: "127.0.0.6", count: 10))
        #expect(clients("/v1/routes", status: 200).sorted() == ["127.0.0.2", "127.0.0.3", "127.0.0.3", "127.0.0.3", "::1"])
        #expect(clients("/healthz", status: 200).contains("127.0.0.4"))
        let untrusted = try #require(lines.first { $0["client"]?.stringValue == "127.0.0.5" })
        #expect(untrusted["peer"] == nil, "a direct request has no separate peer")
        #expect(!serve.stderrText.contains("198.51.100.66") && !serve.stderrText.contains("198.51.100.77"),
                "a forged address is never logged as the client")
        #expect(clients("/v1/routes", status: 400) == ["127.0.0.1"], "a refused header names nobody but the proxy")
        #expect(serve.terminate() == 0)
    }
}
