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

    /// The signing key's say on a request: a token to send it with, or a result without a
    /// request (the key is held, or cannot sign).
    private enum Admission {
        case send(ProviderToken, keyTicket: KeyTicket, probe: Bool)
        case answered(DeliveryResult)
    }

    private func admit() -> Admission {
        // Taken before the key is asked: a stop after this takes the request back.
        let keyTicket = tokens.ticket()
        do {
            switch try tokens.admit() {
            case .held(let hold): return .answered(.transportFailed(hold.failure))
            case .send(let token, let isProbe): return .send(token, keyTicket: keyTicket, probe: isProbe)
            }
        } catch {
            return .answered(.cannotSign(error))
        }
    }

    private func outgoing(_ request: APNsRequest, _ headers: [HeaderField], _ token: ProviderToken, _ keyTicket: KeyTicket) -> TransportRequest {
        TransportRequest(path: request.path, authorization: token.bearerValue, headers: headers, body: request.body,
                         owner: request.withdrawal, key: keyTicket)
    }

    public nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult {
        let token: ProviderToken, keyTicket: KeyTicket, probe: Bool
        switch admit() {
        case .answered(let result): return result
        case .send(let admitted, let ticket, let isProbe): (token, keyTicket, probe) = (admitted, ticket, isProbe)
        }
        // A probe that ends without an answer about the key leaves the stop as it was.
        defer { if probe { tokens.probeEnded() } }
        let request = request.overridingTopic(topicOverride)
        let headers = request.headerFields
        // Handed over, and the answer taken apart where it is (no copy of the request).
        let first = await transport.send(outgoing(request, headers, token, keyTicket))
        return await settle(first, request: request, headers: headers, token: token, keyTicket: keyTicket, probe: probe)
    }

    /// The same, answered through `done`: a 200 is read on the transport's thread and
    /// handed on from there, with no task; any other answer is settled in a task on
    /// `executor` (retries, a token refresh, a key refusal), as `send` settles it.
    public func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor,
                     then done: @escaping @Sendable (DeliveryResult) -> Void) {
        let token: ProviderToken, keyTicket: KeyTicket, probe: Bool
        switch admit() {
        case .answered(let result): return done(result)
        case .send(let admitted, let ticket, let isProbe): (token, keyTicket, probe) = (admitted, ticket, isProbe)
        }
        let request = request.overridingTopic(topicOverride)
        let headers = request.headerFields
        // The closure holds the client, and with it the key's manager, which the request's
        // key ticket refers to without a retain.
        transport.send(outgoing(request, headers, token, keyTicket)) { [self] outcome in
            if case .response(let response) = outcome, response.status == 200 {
                tokens.accepted()
                if probe { tokens.probeEnded() }
                return done(.delivered(apnsId: response.apnsId ?? "", uniqueId: response.uniqueId))
            }
            Task(executorPreference: executor) { [self] in
                let result = await settle(outcome, request: request, headers: headers, token: token, keyTicket: keyTicket, probe: probe)
                if probe { tokens.probeEnded() }
                done(result)
            }
        }
    }

    /// From the first answer to the result: retries (`retry`) and a token refresh send again.
    private nonisolated(nonsending) func settle(_ first: TransportOutcome, request: APNsRequest, headers: [HeaderField],
                                                token: ProviderToken, keyTicket: KeyTicket, probe: Bool) async -> DeliveryResult {
        var outcome = first
        var token = token
        var attempt = 1
        var refreshedToken = false
        while true {
            let response: TransportResponse
            switch outcome {
            case .failure(let failure) where failure.code == .streamReset && attempt < retry.maxAttempts:
                // The server had the whole request and reset the stream: it may have been
                // delivered, so this is an attempt like a 500 (at-least-once), with backoff.
                let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: nil, unit: jitter())
                try? await clock.sleep(for: .milliseconds(delay))
                attempt += 1
                outcome = await transport.send(outgoing(request, headers, token, keyTicket))
                continue
            case .failure(let failure): return .transportFailed(failure)
            case .response(let r): response = r
            }
            if response.status == 200 {
                tokens.accepted()
                return .delivered(apnsId: response.apnsId ?? "", uniqueId: response.uniqueId)
            }
            let error = APNsErrorBody(response.body, status: response.status)
            if response.status == 403, error.reason == .expiredProviderToken, !refreshedToken {
                refreshedToken = true
                if let fresh = try? tokens.refresh(after: token) {
                    token = fresh
                    // A token problem is ours, not an attempt against the device.
                    outcome = await transport.send(outgoing(request, headers, token, keyTicket))
                    continue
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
            outcome = await transport.send(outgoing(request, headers, token, keyTicket))
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
