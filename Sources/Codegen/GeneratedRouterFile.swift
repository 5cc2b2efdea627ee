import StrictJSON

/// What `pushgate codegen check` reads back from a generated router: its type name and
/// the fingerprint of the table it came from.
public struct GeneratedRouterFile: Sendable {
    public let typeName: String
    public let fingerprint: String

    public init?(_ text: String) {
        var typeName: String?
        var fingerprint: String?
        for line in LineSplitter.lines(of: Array(text.utf8)) {
            if typeName == nil, line.hasPrefix("public enum "), line.hasSuffix(": Hashable, Sendable {") {
                typeName = String(line.dropFirst("public enum ".count).prefix { $0 != ":" })
            }
            let marker = "    public static let tableFingerprint = \""
            if fingerprint == nil, line.hasPrefix(marker), line.hasSuffix("\"") {
                fingerprint = String(line.dropFirst(marker.count).dropLast())
            }
        }
        guard let typeName, let fingerprint else { return nil }
        self.typeName = typeName
        self.fingerprint = fingerprint
    }

    /// The file from `import Foundation` on: everything but the header comment, which
    /// records how the file was generated (paths) rather than what it is.
    public static func body(of text: String) -> Substring {
        guard let start = text.firstRange(of: "\nimport Foundation\n") else { return text[...] }
        return text[start.lowerBound...]
    }
}
