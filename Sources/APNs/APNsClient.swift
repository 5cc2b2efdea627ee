import Payloads
import StrictJSON
import Timing

/// Delivers through an HTTP/2 transport: adds the shared provider token, reads APNs's
/// answer into a `DeliveryResult`, retries what Apple calls transient, and refreshes the
/// token once on `ExpiredProviderToken`. `TooManyProviderTokenUpdates` is never retried:
/// it pauses the key (see `ProviderTokenManager.pausedUntil`), and while the pause lasts
/// every send answers that reason at once, without a request to APNs.
public final class APNsClient: NotificationSender {
    private let transport: any HTTPTransport
    private let tokens: ProviderTokenManager
    private let retry: RetryPolicy
    private let topicOverride: String?
    private let jitter: @Sendable () -> Double
    private let clock: any TimeSource

    public init(transport: any HTTPTransport, tokens: ProviderTokenManager, retry: RetryPolicy, topicOverride: String? = nil,
                jitter: @escaping @Sendable () -> Double = Backoff.randomUnit, clock: any TimeSource = SystemClock()) {
        self.transport = transport
        self.tokens = tokens
        self.retry = retry
        self.topicOverride = topicOverride
        self.jitter = jitter
        self.clock = clock
    }

    public func send(_ request: APNsRequest) async -> DeliveryResult {
        if tokens.pausedUntil() != nil { return Self.paused }
        var token: ProviderToken
        do { token = try tokens.currentToken() } catch {
            return .cannotSign(error)
        }
        let headerLines = request.headers(topicOverride: topicOverride).map { $0.name + ": " + $0.value }
        var attempt = 1
        var refreshedToken = false
        while true {
            let outgoing = TransportRequest(path: request.path, headerLines: ["authorization: " + token.bearerValue] + headerLines,
                                            body: request.body)
            let response: TransportResponse
            switch await transport.send(outgoing) {
            case .failure(let failure) where failure.code == .streamReset && attempt < retry.maxAttempts:
                // The server had the whole request and reset the stream: it may have been
                // delivered, so this is an attempt like a 500 (at-least-once), with backoff.
                let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: nil, unit: jitter())
                try? await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
                attempt += 1
                continue
            case .failure(let failure): return .transportFailed(failure)
            case .response(let r): response = r
            }
            if response.status == 200 { return .delivered(apnsId: response.apnsId ?? "") }
            let error = APNsErrorBody(response.body, status: response.status)
            if response.status == 410 {
                return .unregistered(reason: error.reason, timestampMilliseconds: error.timestamp)
            }
            if response.status == 429, error.reason == .tooManyProviderTokenUpdates {
                tokens.pauseAfterTooManyUpdates(token)
                return Self.paused
            }
            if response.status == 403, error.reason == .expiredProviderToken, !refreshedToken {
                refreshedToken = true
                if let fresh = try? tokens.refresh(after: token) {
                    token = fresh
                    continue  // a token problem is ours, not an attempt against the device
                }
            }
            guard retry.isRetryable(status: response.status, reason: error.reason), attempt < retry.maxAttempts else {
                return .failed(status: response.status, reason: error.reason)
            }
            let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: Self.seconds(response.retryAfter),
                                                unit: jitter())
            try? await clock.sleep(for: .milliseconds(delay))
            attempt += 1
        }
    }

    /// What a send answers while the key is paused.
    static let paused = DeliveryResult.failed(status: 429, reason: .tooManyProviderTokenUpdates)

    /// `Retry-After` in seconds (the HTTP-date form is not used by APNs); capped at an hour
    /// so a confused server cannot park a campaign forever.
    static func seconds(_ retryAfter: String?) -> Int? {
        guard let retryAfter, let seconds = Int(retryAfter), seconds >= 0 else { return nil }
        return min(seconds, 3600)
    }
}

/// APNs's error body: `{"reason":"BadDeviceToken"}`, plus `"timestamp"` (ms) for 410.
struct APNsErrorBody {
    let reason: APNsReason
    let timestamp: Int64?

    init(_ body: [UInt8], status: Int) {
        let object = (try? JSONParser(maxDepth: 4, maxBytes: 16 * 1024).parse(body))?.objectValue
        if let text = object?["reason"]?.stringValue {
            reason = APNsReason(text)
        } else {
            reason = .unknown("HTTP \(status) without a reason")
        }
        timestamp = object?["timestamp"]?.int64Value
    }
}
