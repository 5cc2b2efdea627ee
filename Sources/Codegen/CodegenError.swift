/// Why a Swift router cannot be generated for a table or with these options: the place
/// (`routes[1].name`, `--type`) and what was expected. A configuration error (exit 2).
public struct CodegenError: Error, Sendable, CustomStringConvertible {
    public let place: String
    public let message: String

    public init(_ place: String, _ message: String) {
        self.place = place
        self.message = message
    }

    public var description: String { "\(place): \(message)" }
}
