import StrictJSON

/// A problem with the `apns` configuration. `location` is where: a JSON path in the
/// configuration file (`apns.retry.maxAttempts`) or an environment variable's name.
public struct APNsConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        // The same words every document reader uses (`DiagnosticDomain.document`).
        case missingSetting = "missing"
        case wrongType
        case invalidValue
        case unknownSetting = "unknownKey"
        case keyFileUnreadable
        case keyEncrypted
        case keyNotPKCS8
        case keyNotP256
        case keyInvalid
        /// The shared provider token could not be read from or stored in the gateway's storage.
        case tokenStoreFailed
    }

    public let code: Code
    public let location: String
    public let message: String

    public init(_ code: Code, at location: String, _ message: String) {
        self.code = code
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message) [\(code.rawValue)]" }

    public var diagnosticCode: DiagnosticCode { DiagnosticCode(rawValue: code.rawValue) }
}
