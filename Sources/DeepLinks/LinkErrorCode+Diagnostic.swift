import StrictJSON

extension LinkErrorCode {
    public var diagnosticCode: DiagnosticCode { DiagnosticCode(rawValue: rawValue) }
}

extension DiagnosticDomain {
    /// Why the canonicaliser refuses a deep link.
    public static let link = DiagnosticDomain("link", LinkErrorCode.allCases.map(\.diagnosticCode))
}
