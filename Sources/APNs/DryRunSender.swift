import APNsCore

/// Builds and signs every request exactly as `APNsClient` would, and sends nothing.
public final class DryRunSender: NotificationSender {
    private let tokens: ProviderTokenManager
    private let baseURL: String
    private let topicOverride: String?

    public init(tokens: ProviderTokenManager, baseURL: String, topicOverride: String? = nil) {
        self.tokens = tokens
        self.baseURL = baseURL
        self.topicOverride = topicOverride
    }

    public func send(_ request: APNsRequest) async -> DeliveryResult { prepare(request) }

    public func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor,
                     then done: @escaping @Sendable (DeliveryResult) -> Void) {
        done(prepare(request))
    }

    /// The request as it would go, signed (what `send` answers).
    public func prepare(_ request: APNsRequest) -> DeliveryResult {
        let token: ProviderToken
        do { token = try tokens.currentToken() } catch {
            return .cannotSign(error)
        }
        // The token is signed for real, but shown redacted: tokens never reach output.
        let authorization = HTTPHeader("authorization", "bearer <ES256 provider token kid=\(token.keyId) iat=\(token.issuedAt), redacted>")
        let sent = request.overridingTopic(topicOverride)
        return .dryRun(PreparedRequest(method: sent.method, url: baseURL + sent.path, headers: [authorization] + sent.headers,
                                       body: sent.body, apnsID: sent.apnsID))
    }
}
