import Foundation
import TestSupport
import Testing

/// Runs the built `pushgate` binary and captures what it prints (the
/// swift-argument-parser way of testing a CLI: through the real executable).
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum CLI {
    /// The executable next to the test bundle in `.build/<config>/`.
    static var executable: URL {
        let bundle = Bundle(for: Marker.self).bundleURL
        var dir = bundle.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("pushgate")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return TestPaths.packageRoot.appendingPathComponent(".build/debug/pushgate")
    }

    final class Marker {}

    @discardableResult
    /// - Parameters:
    ///   - wrapper: a command to run the binary under (e.g. `/usr/bin/time -f %M`).
    ///   - program: another executable to run instead of `pushgate`.
    static func run(_ arguments: [String], stdin: Data? = nil, workingDirectory: URL? = nil,
                    environment: [String: String]? = nil, wrapper: [String] = [], program: URL? = nil) throws -> CLIResult {
        let process = Process()
        let executable = program ?? Self.executable
        if let program = wrapper.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(wrapper.dropFirst()) + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.currentDirectoryURL = workingDirectory ?? TestPaths.packageRoot
        if let environment { process.environment = environment }
        let out = Pipe.closedOnExec(), err = Pipe.closedOnExec(), input = Pipe.closedOnExec()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // Read both pipes concurrently so a large output cannot deadlock the child.
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}

@Suite struct CLIBasicsTests {
    @Test func unknownCommandIsUsageError() throws {
        let r = try CLI.run(["frobnicate"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("unknown command"))
    }

    @Test func noArgumentsIsUsageError() throws {
        let r = try CLI.run([])
        #expect(r.status == 2)
        #expect(r.stderr.contains("usage: pushgate"))
    }

    @Test func helpListsCommands() throws {
        let r = try CLI.run(["help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("commands:"))
    }
}
