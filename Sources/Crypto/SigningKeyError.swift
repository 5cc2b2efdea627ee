/// Why a provider-token key cannot be used. Messages name the file, never its content.
public struct SigningKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        case keyFileUnreadable
        case keyEncrypted
        case keyNotPKCS8
        case keyNotP256
        case keyInvalid
        case signingFailed
        /// The shared provider token could not be read from or written to storage.
        case tokenStoreFailed
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
