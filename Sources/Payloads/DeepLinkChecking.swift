import DeepLinks

/// Anything that turns a link into its canonical form or a rejection: the app's route
/// table in production, a small fake in tests. Payloads never parses links itself.
public protocol DeepLinkChecking: Sendable {
    func check(_ link: String) -> LinkCheckResult
}
