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

    /// A request the key admitted. A class: the answer's callback holds it (for any answer
    /// but a 200) with one retain, not a copy of each of its strings and arrays.
    private final class Admitted: Sendable {
        let request: APNsRequest
        let headers: [HeaderField]
        /// The token it first goes out with (`settle` sends again with a fresh one after a refresh).
        let token: ProviderToken
        let keyTicket: KeyTicket
        /// Sent while the key is held, to find out whether APNs takes it again.
        let probe: Bool

        init(request: APNsRequest, headers: [HeaderField], token: ProviderToken, keyTicket: KeyTicket, probe: Bool) {
            self.request = request
            self.headers = headers
            self.token = token
            self.keyTicket = keyTicket
            self.probe = probe
        }

        func outgoing(with token: ProviderToken) -> TransportRequest {
            TransportRequest(path: request.path, authorization: token.bearerValue, headers: headers, body: request.body,
                             owner: request.withdrawal, key: keyTicket)
        }

        var outgoing: TransportRequest { outgoing(with: token) }
    }

    /// The request as it goes out under the key, or the result without a request (the key
    /// is held, or cannot sign).
    private enum Admission {
        case send(Admitted)
        case answered(DeliveryResult)
    }

    private func admit(_ request: APNsRequest) -> Admission {
        // Taken before the key is asked: a stop after this takes the request back.
        let keyTicket = tokens.ticket()
        let token: ProviderToken, probe: Bool
        do {
            switch try tokens.admit() {
            case .held(let hold): return .answered(.transportFailed(hold.failure))
            case .send(let admitted, let isProbe): (token, probe) = (admitted, isProbe)
            }
        } catch {
            return .answered(.cannotSign(error))
        }
        let request = request.overridingTopic(topicOverride)
        return .send(Admitted(request: request, headers: request.headerFields, token: token, keyTicket: keyTicket, probe: probe))
    }

    public nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult {
        switch admit(request) {
        case .answered(let result): return result
        case .send(let admitted): return await settle(await transport.send(admitted.outgoing), admitted)
        }
    }

    /// The same, answered through `done`: a 200 is read on the transport's thread and
    /// handed on from there, with no task; any other answer is settled in a task on
    /// `executor` (retries, a token refresh, a key refusal), as `send` settles it.
    public func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor,
                     then done: @escaping @Sendable (DeliveryResult) -> Void) {
        let admitted: Admitted
        switch admit(request) {
        case .answered(let result): return done(result)
        case .send(let made): admitted = made
        }
        // The closure holds the client, and with it the key's manager, which the request's
        // key ticket refers to without a retain.
        transport.send(admitted.outgoing) { [self] outcome in
            if case .response(let response) = outcome, response.status == 200 {
                tokens.accepted()  // ends the key's stop, a probe's included: no probe left to end
                return done(.delivered(apnsId: response.apnsId ?? "", uniqueId: response.uniqueId))
            }
            Task(executorPreference: executor) { [self] in done(await settle(outcome, admitted)) }
        }
    }

    /// From the first answer to the result: retries (`retry`) and a token refresh send again.
    private nonisolated(nonsending) func settle(_ first: TransportOutcome, _ admitted: Admitted) async -> DeliveryResult {
        var token = admitted.token
        // A probe that ends without an answer about the key leaves the stop as it was.
        defer { if admitted.probe { tokens.probeEnded() } }
        var outcome = first
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
                outcome = await transport.send(admitted.outgoing(with: token))
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
                    outcome = await transport.send(admitted.outgoing(with: token))
                    continue
                }
                // Younger than 20 minutes, yet expired for Apple: the clocks disagree.
            }
            if (response.status == 429 && error.reason == .tooManyProviderTokenUpdates)
                || (response.status == 403 && KeyHold.stopsTheKey(error.reason)) {
                return .transportFailed(tokens.refused(error.reason, token: token, probe: admitted.probe).failure)
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
            outcome = await transport.send(admitted.outgoing(with: token))
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
