import Foundation

/// Debian's h2o with a one-line mruby handler (Benchmarks/sink/h2o.conf) on a free
/// loopback port, with a throwaway CA and certificate; and h2load to measure it.
final class H2OSink {
    let port: Int
    let caFile: String
    private let directory: URL
    private let process: Process
    var url: String { "https://127.0.0.1:\(port)" }

    static func start() throws -> H2OSink { try H2OSink() }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let dir = directory
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("ext.cnf"), atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Self.run("/usr/bin/openssl", ["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "1", "-subj", "/CN=sink CA"])
        try Self.run("/usr/bin/openssl", ["req"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost"])
        try Self.run("/usr/bin/openssl", ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                                          "-CAcreateserial", "-out", path("server.pem"), "-days", "1", "-extfile", path("ext.cnf")])
        caFile = path("ca.pem")
        port = try Self.freePort()
        let template = try String(contentsOfFile: "Benchmarks/sink/h2o.conf", encoding: .utf8)
        let config = template.replacingOccurrences(of: "@PORT@", with: String(port))
            .replacingOccurrences(of: "@CERT@", with: path("server.pem")).replacingOccurrences(of: "@KEY@", with: path("server.key"))
            .replacingOccurrences(of: "@LOG@", with: path("error.log")).replacingOccurrences(of: "@FAIL_EVERY@", with: "0")
        try config.write(toFile: path("h2o.conf"), atomically: true, encoding: .utf8)
        try "{}".write(toFile: path("body.json"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/h2o")
        process.arguments = ["-c", path("h2o.conf")]
        CPUPinning.sink?.apply(to: process)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for _ in 0..<100 where !Self.accepts(port) { usleep(50_000) }
        guard Self.accepts(port) else { process.terminate(); throw CocoaError(.fileReadUnknown) }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// h2load's rate for the same shape of traffic: 1 connection, 100 streams, a POST body.
    func h2load(requests: Int, body: String) -> Double? {
        let bodyFile = directory.appendingPathComponent("body.json").path
        try? body.write(toFile: bodyFile, atomically: true, encoding: .utf8)
        let output = Pipe()
        let h2load = Process()
        h2load.executableURL = URL(fileURLWithPath: "/usr/bin/h2load")
        h2load.arguments = ["-c1", "-m100", "-n", String(requests), "-d", bodyFile, "-H", "apns-topic: com.example.shop",
                            "-H", "apns-push-type: alert", url + "/3/device/" + String(repeating: "ab", count: 32)]
        CPUPinning.client?.apply(to: h2load)
        h2load.standardOutput = output
        h2load.standardError = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? h2load.run()) != nil else { return nil }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        h2load.waitUntilExit()
        // "finished in 1.46s, 68708.55 req/s, 1.70MB/s"
        guard text.contains("\(requests) succeeded"), let line = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
              let field = line.split(separator: ",").dropFirst().first else { return nil }
        return Double(field.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileReadUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// `PUSHGATE_BENCH_APNS_PIN=1`: the sink runs on CPU 1 and every client (h2load, the bare
/// program, pushgate's threads) on CPU 0, so that a client which is the bottleneck shows it
/// (about 1.0 cores used) and rates can be compared; unpinned, on a loaded machine, neither
/// side may be CPU-bound and the rate is the scheduler's.
struct CPUPinning {
    let cpu: Int

    static let enabled = ProcessInfo.processInfo.environment["PUSHGATE_BENCH_APNS_PIN"] == "1"
    static let sink = enabled ? CPUPinning(cpu: 1) : nil
    static let client = enabled ? CPUPinning(cpu: 0) : nil

    /// Starts the process under `taskset -c CPU` (which execs it: same pid).
    func apply(to process: Process) {
        guard let tool = process.executableURL?.path else { return }
        process.arguments = ["-c", String(cpu), tool] + (process.arguments ?? [])
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
    }

    /// Pins every thread of this process (`taskset -a -p`); threads started later inherit it.
    func pinThisProcess() {
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-a", "-p", "-c", String(cpu), String(getpid())]
        taskset.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? taskset.run()) != nil else { return }
        taskset.waitUntilExit()
    }
}
