import StrictJSON
import Crypto

extension DiagnosticDomain {
    /// The provider-token key and the `apns` settings beyond the document codes.
    public static let signingKey = DiagnosticDomain("signingKey", SigningKeyError.Code.allCases.map { DiagnosticCode(rawValue: $0.rawValue) }
        + [APNsConfigurationError.Code.caFileUnreadable, .caFileNotPEM].map { DiagnosticCode(rawValue: $0.rawValue) })
}
