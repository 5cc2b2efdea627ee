import Synchronization

/// One provider token per key per process, shared by every connection and worker.
///
/// Apple's rules: refresh no more often than every 20 minutes and before 60; minting more
/// often earns `TooManyProviderTokenUpdates`. So the token is rebuilt lazily once older
/// than 50 minutes, and never sooner than 20 minutes after the last one, whatever APNs
/// answers. Minting happens under the lock, which makes refreshes single-flight: callers
/// that hit `ExpiredProviderToken` at once all get the one new token.
public final class ProviderTokenManager: Sendable {
    public static let maximumAgeSeconds: Int64 = 50 * 60
    public static let minimumIntervalSeconds: Int64 = 20 * 60

    private struct State {
        var token: ProviderToken?
        var minted = 0
    }

    private let key: SigningKey
    private let teamId: String
    private let keyId: String
    private let clock: any WallClock
    private let state = Mutex(State())

    public init(key: SigningKey, teamId: String, keyId: String, clock: any WallClock = SystemWallClock()) {
        self.key = key
        self.teamId = teamId
        self.keyId = keyId
        self.clock = clock
    }

    /// How many tokens this manager has signed (for tests and metrics).
    public var mintedCount: Int { state.withLock { $0.minted } }

    /// The shared token, minted on first use and when older than 50 minutes.
    public func currentToken() throws(SigningKeyError) -> ProviderToken {
        let now = clock.secondsSince1970()
        return try state.withLock { (state) throws(SigningKeyError) -> ProviderToken in
            if let token = state.token, now - token.issuedAt < Self.maximumAgeSeconds {
                return token
            }
            return try mint(&state, now: now)
        }
    }

    /// APNs answered `ExpiredProviderToken` to a request signed with `rejected`. Returns the
    /// token to retry with: a newer one if another caller already refreshed, a new one if
    /// the 20-minute floor allows, or nil when it does not (retrying would only fail again).
    public func refresh(after rejected: ProviderToken) throws(SigningKeyError) -> ProviderToken? {
        let now = clock.secondsSince1970()
        return try state.withLock { (state) throws(SigningKeyError) -> ProviderToken? in
            if let token = state.token, token != rejected { return token }
            if let token = state.token, now - token.issuedAt < Self.minimumIntervalSeconds { return nil }
            return try mint(&state, now: now)
        }
    }

    private func mint(_ state: inout State, now: Int64) throws(SigningKeyError) -> ProviderToken {
        let token = try ProviderToken.sign(teamId: teamId, keyId: keyId, issuedAt: now, key: key)
        state.token = token
        state.minted += 1
        return token
    }
}
