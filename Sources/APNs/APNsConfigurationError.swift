import StrictJSON

/// A problem found when the `apns` settings are put to use (the key loaded, the transport
/// built), after `APNsConfiguration.read` accepted their shape. `setting` is the setting
/// to blame; the caller knows whether its value came from the file or the environment.
public struct APNsConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        // The same words every document reader uses (`DiagnosticDomain.document`).
        case missingSetting = "missing"
        case invalidValue
        case keyFileUnreadable
        case keyEncrypted
        case keyNotPKCS8
        case keyNotP256
        case keyInvalid
        /// `caFile` cannot be read.
        case caFileUnreadable
        /// `caFile` holds no PEM certificate.
        case caFileNotPEM
        case tokenStoreFailed
    }

    public let code: Code
    public let setting: JSONPath
    public let message: String

    public init(_ code: Code, at setting: JSONPath, _ message: String) {
        self.code = code
        self.setting = setting
        self.message = message
    }

    public var description: String { "\(setting): \(message) [\(code.rawValue)]" }

    public var diagnosticCode: DiagnosticCode { DiagnosticCode(rawValue: code.rawValue) }
}
