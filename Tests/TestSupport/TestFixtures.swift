import Foundation

/// Where the package is, for tests that read the shipped files (config/, Templates/,
/// docs/) or run the built binary.
public enum TestPaths {
    /// The package root: this file is Tests/TestSupport/TestFixtures.swift.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bytes of a file of the package (`config/routes.json`).
    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: packageRoot.appendingPathComponent(relativePath)))
    }
}

/// A fresh database file in its own temporary folder.
public func temporaryDatabasePath() -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("test.db").path
}

/// Device tokens every suite may use: valid (64 hex digits) and recognisable in output.
public enum TestTokens {
    /// `abab…ab`: the device of a one-device campaign.
    public static let device = String(repeating: "ab", count: 32)
    /// `cdcd…cd`: a second device.
    public static let other = String(repeating: "cd", count: 32)
}
