import Foundation

/// A throwaway CA and a server certificate for 127.0.0.1, made once per test run with the
/// openssl CLI, so fakes can speak TLS the way Apple does.
public enum TestTLS {
    public struct Material: Sendable {
        public let caFile: String
        public let certFile: String
        public let keyFile: String
        /// A second CA that did not sign the server certificate.
        public let otherCAFile: String
    }

    public static let material: Material? = try? make()

    private static func make() throws -> Material {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: path("ext.cnf"), atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=pushgate test CA"])
        try openssl(["req", "-x509"] + ec + ["-keyout", path("other.key"), "-out", path("other.pem"), "-days", "2", "-subj", "/CN=other CA"])
        try openssl(["req"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost"])
        try openssl(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                     "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("ext.cnf")])
        return Material(caFile: path("ca.pem"), certFile: path("server.pem"), keyFile: path("server.key"), otherCAFile: path("other.pem"))
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSupportError(message: "openssl \(arguments.first ?? "") failed") }
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
