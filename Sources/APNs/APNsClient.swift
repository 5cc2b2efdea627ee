import APNsCore
import StrictJSON
import Timing
import CurlClient

/// Delivers through an HTTP/2 transport: adds the shared provider token, reads APNs's
/// answer into a `DeliveryResult`, retries what Apple calls transient, and refreshes the
/// token once on `ExpiredProviderToken`. An answer that refuses the key itself
/// (`TooManyProviderTokenUpdates`, or an authentication failure: `KeyHold.stopsTheKey`)
/// holds the key in `ProviderTokenManager`: that send and every send while the hold lasts
/// answer `keyStopped`, the latter at once, without a request to APNs.
public final class APNsClient: NotificationSender {
    private let transport: any HTTPTransport
    private let tokens: ProviderTokenManager
    private let retry: RetryPolicy
    private let topicOverride: String?
    private let jitter: @Sendable () -> Double
    private let clock: any TimeSource

    public init(transport: any HTTPTransport, tokens: ProviderTokenManager, retry: RetryPolicy, topicOverride: String? = nil,
                jitter: @escaping @Sendable () -> Double = Backoff.randomUnit, clock: any TimeSource) {
        self.transport = transport
        self.tokens = tokens
        self.retry = retry
        self.topicOverride = topicOverride
        self.jitter = jitter
        self.clock = clock
    }

    public var preferredExecutors: [any TaskExecutor] { (transport as? CurlHTTP2Transport)?.executors ?? [] }

    public nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult {
        var token: ProviderToken
        let probe: Bool
        // Taken before the key is asked: a stop after this takes the request back.
        let keyTicket = tokens.ticket()
        do {
            switch try tokens.admit() {
            case .held(let hold): return .transportFailed(hold.failure)
            case .send(let admitted, let isProbe): (token, probe) = (admitted, isProbe)
            }
        } catch {
            return .cannotSign(error)
        }
        // A probe that ends without an answer about the key leaves the stop as it was.
        defer { if probe { tokens.probeEnded() } }
        let request = request.overridingTopic(topicOverride)
        let headers = request.headerFields
        var attempt = 1
        var refreshedToken = false
        while true {
            let outgoing = TransportRequest(path: request.path, authorization: token.bearerValue, headers: headers, body: request.body,
                                            owner: request.withdrawal, key: keyTicket)
            var response: TransportResponse
            // Handed over, and the answer taken apart where it is (no copy of the request,
            // of the outcome or of the response).
            let outcome = await transport.send(consume outgoing)
            switch consume outcome {
            case .failure(let failure) where failure.code == .streamReset && attempt < retry.maxAttempts:
                // The server had the whole request and reset the stream: it may have been
                // delivered, so this is an attempt like a 500 (at-least-once), with backoff.
                let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: nil, unit: jitter())
                try? await clock.sleep(for: .milliseconds(delay))
                attempt += 1
                continue
            case .failure(let failure): return .transportFailed(failure)
            case .response(let r): response = r
            }
            if response.status == 200 {
                tokens.accepted()
                return .delivered(apnsId: response.apnsId ?? "", uniqueId: response.uniqueId.take())
            }
            let error = APNsErrorBody(response.body, status: response.status)
            if response.status == 403, error.reason == .expiredProviderToken, !refreshedToken {
                refreshedToken = true
                if let fresh = try? tokens.refresh(after: token) {
                    token = fresh
                    continue  // a token problem is ours, not an attempt against the device
                }
                // Younger than 20 minutes, yet expired for Apple: the clocks disagree.
            }
            if (response.status == 429 && error.reason == .tooManyProviderTokenUpdates)
                || (response.status == 403 && KeyHold.stopsTheKey(error.reason)) {
                return .transportFailed(tokens.refused(error.reason, token: token, probe: probe).failure)
            }
            tokens.accepted()
            if response.status == 410 {
                return .unregistered(reason: error.reason, timestampMilliseconds: error.timestamp)
            }
            guard retry.isRetryable(status: response.status, reason: error.reason), attempt < retry.maxAttempts else {
                return .failed(status: response.status, reason: error.reason, retryAfterSeconds: Self.seconds(response.retryAfter))
            }
            let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: Self.seconds(response.retryAfter),
                                                unit: jitter())
            try? await clock.sleep(for: .milliseconds(delay))
            attempt += 1
        }
    }

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
