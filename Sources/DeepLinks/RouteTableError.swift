import StrictJSON

/// Why a route table was refused: the file, where in the document, and what is wrong.
/// The CLI prints `description` and exits 2.
public struct RouteTableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file name (or other label) the bytes came from.
    public let source: String
    /// Where in the document the problem is (`$` for the whole document).
    public let path: JSONPath
    public let message: String

    public init(source: String, path: JSONPath, message: String) {
        self.source = source
        self.path = path
        self.message = message
    }

    /// `FILE: at PATH: message`
    public var description: String { "\(source): at \(path): \(message)" }
}
