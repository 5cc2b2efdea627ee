import StrictJSON

/// Why a route table was refused: the file, where in the document, and what is wrong.
/// The loader reports every problem it can find at once: this is the first, `others` the
/// rest; `diagnostics` lists them all.
public struct RouteTableError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: DiagnosticCode
    /// The file name (or other label) the bytes came from.
    public let source: String
    /// Where in the document the problem is (`$` for the whole document).
    public let path: JSONPath
    public let message: String

    /// The problems found after this one, in document order.
    public var others: [RouteTableError] = []

    public init(_ code: DiagnosticCode = .invalidValue, source: String, path: JSONPath, message: String) {
        self.code = code
        self.source = source
        self.path = path
        self.message = message
    }

    /// `FILE: at PATH: message` (the first problem).
    public var description: String { "\(source): at \(path): \(message)" }

    /// Every problem in the file, as every reader reports one.
    public var diagnostics: [Diagnostic] {
        ([self] + others).map { Diagnostic($0.code, at: .file($0.source, at: $0.path), $0.message) }
    }
}

extension DiagnosticCode {
    /// Two routes can match one URL and neither is more specific.
    public static let ambiguousRoutes = DiagnosticCode(rawValue: "ambiguousRoutes")
    /// A route's `path` pattern is not literal, `:name` and final `*` segments.
    public static let invalidPattern = DiagnosticCode(rawValue: "invalidPattern")
}

extension DiagnosticDomain {
    /// The route table beyond the document codes.
    public static let routeTable = DiagnosticDomain("routeTable", [.ambiguousRoutes, .invalidPattern])
}
