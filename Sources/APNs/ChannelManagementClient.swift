import APNsCore
import Payloads
import StrictJSON
import Timing
import CurlClient

/// Apple's broadcast channel management API for one app in one environment: create, read,
/// list and delete channels (`/1/apps/<bundle id>/channels`, `…/all-channels`) on the
/// management host, signed with the same provider token as the app's pushes (one token
/// per signing key: the manager is the app's sender's).
///
/// Like a push: a key APNs refuses holds it (`ProviderTokenManager.refused`), an
/// `ExpiredProviderToken` gets one fresh token and one more try, and 429/500/503 are
/// retried with the push's backoff, except for a create (a create that got a 500 may
/// have made a channel; sending it again could make a second one).
public struct ChannelManagementClient: Sendable {
    public let bundleId: String
    /// `https://api-manage-broadcast.sandbox.push.apple.com:2195` or an override.
    public let baseURL: String
    private let tokens: ProviderTokenManager
    private let transport: any OneShotTransport
    private let retry: RetryPolicy
    private let clock: any TimeSource
    private let requestId: @Sendable () -> String

    public init(bundleId: String, baseURL: String, tokens: ProviderTokenManager, transport: any OneShotTransport,
                retry: RetryPolicy = RetryPolicy(), clock: any TimeSource,
                requestId: @escaping @Sendable () -> String = { APNsID.random() }) {
        self.bundleId = bundleId
        self.baseURL = baseURL
        self.tokens = tokens
        self.transport = transport
        self.retry = retry
        self.clock = clock
        self.requestId = requestId
    }

    /// The request as it goes out, minus the provider token: for `--dry-run`-like output
    /// and the tests.
    public func request(_ operation: ChannelOperation, requestId id: String, token: String) -> OneShotRequest {
        var lines = ["authorization: bearer " + token, "apns-request-id: " + id]
        if let channel = operation.channelId { lines.append("apns-channel-id: " + channel) }
        return OneShotRequest(method: operation.method, url: baseURL + operation.path(bundleId: bundleId),
                              headerLines: lines, body: operation.body)
    }

    public func perform(_ operation: ChannelOperation) async -> ChannelResult {
        let id = requestId()
        var token: ProviderToken
        let probe: Bool
        do {
            switch try tokens.admit() {
            case .held(let hold): return ChannelResult(requestId: nil, outcome: .failure(.transport(hold.failure)))
            case .send(let admitted, let isProbe): (token, probe) = (admitted, isProbe)
            }
        } catch {
            return ChannelResult(requestId: nil, outcome: .failure(.transport(TransportFailure(.keyStopped, "cannot sign a provider token: \(error.message)"))))
        }
        defer { if probe { tokens.probeEnded() } }
        var attempt = 1
        var refreshed = false
        while true {
            let response: OneShotResponse
            switch await transport.perform(request(operation, requestId: id, token: token.compact)) {
            case .failure(let failure): return ChannelResult(requestId: id, outcome: .failure(.transport(failure)))
            case .success(let answer): response = answer
            }
            let answeredId = response.headers["apns-request-id"] ?? id
            if (200...299).contains(response.status) {
                tokens.accepted()
                return ChannelResult(requestId: answeredId, outcome: Self.read(operation, response))
            }
            let error = APNsErrorBody(response.body, status: response.status)
            if response.status == 403, error.reason == .expiredProviderToken, !refreshed {
                refreshed = true
                if let fresh = try? tokens.refresh(after: token) {
                    token = fresh
                    continue
                }
            }
            if (response.status == 429 && error.reason == .tooManyProviderTokenUpdates)
                || (response.status == 403 && KeyHold.stopsTheKey(error.reason)) {
                _ = tokens.refused(error.reason, token: token, probe: probe)
                return ChannelResult(requestId: answeredId, outcome: .failure(.refused(status: response.status, reason: error.reason)))
            }
            tokens.accepted()
            guard operation.isIdempotent, retry.isRetryable(status: response.status, reason: error.reason), attempt < retry.maxAttempts else {
                return ChannelResult(requestId: answeredId, outcome: .failure(.refused(status: response.status, reason: error.reason)))
            }
            let delay = retry.delayMilliseconds(afterAttempt: attempt, retryAfterSeconds: APNsClient.seconds(response.headers["retry-after"]),
                                                unit: Backoff.randomUnit())
            try? await clock.sleep(for: .milliseconds(delay))
            attempt += 1
        }
    }

    /// A 2xx answer as Apple documents it for the operation; anything else is reported,
    /// never guessed at.
    static func read(_ operation: ChannelOperation, _ response: OneShotResponse) -> Result<ChannelAnswer, ChannelFailure> {
        func unexpected(_ what: String) -> Result<ChannelAnswer, ChannelFailure> {
            .failure(.transport(TransportFailure(.transportError, "APNs answered \(response.status) to the channel \(operation.name) but \(what)")))
        }
        switch operation {
        case .create(let policy):
            guard let id = response.headers["apns-channel-id"], BroadcastChannelID.problem(with: id) == nil else {
                return unexpected("without a usable apns-channel-id header")
            }
            return .success(.created(BroadcastChannel(id: id, storagePolicy: policy, pushType: "LiveActivity")))
        case .read(let id):
            guard let object = (try? JSONParser(maxDepth: 4, maxBytes: 64 * 1024).parse(response.body))?.objectValue,
                  let value = object["message-storage-policy"]?.int64Value, let policy = ChannelStoragePolicy(rawValue: Int(value)) else {
                return unexpected("its body has no message-storage-policy of 0 or 1")
            }
            return .success(.channel(BroadcastChannel(id: id, storagePolicy: policy, pushType: object["push-type"]?.stringValue)))
        case .list:
            guard let object = (try? JSONParser(maxDepth: 4, maxBytes: 4 * 1024 * 1024).parse(response.body))?.objectValue,
                  let items = object["channels"]?.arrayValue else {
                return unexpected("its body has no channels list")
            }
            let ids = items.compactMap(\.stringValue)
            guard ids.count == items.count else { return unexpected("its channels list holds something other than ids") }
            return .success(.channels(ids))
        case .delete(let id):
            return .success(.deleted(id))
        }
    }
}
