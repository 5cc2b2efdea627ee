import Synchronization
import Timing

/// One provider token per signing key, shared by every connection and worker and, through
/// a `ProviderTokenStore`, by every process that signs with the key.
///
/// Apple's rules: refresh no more often than every 20 minutes and before 60; minting more
/// often earns `TooManyProviderTokenUpdates`. So the token is rebuilt lazily once older
/// than 50 minutes, and never sooner than 20 minutes after the last one, whatever APNs
/// answers. Minting happens under this manager's lock and the store's, each re-checking
/// what the other holders did, which makes refreshes single-flight across processes.
///
/// When APNs still answers `TooManyProviderTokenUpdates` (a process outside the store
/// minted), sends with the key pause until the window has passed (`pausedUntil`), and the
/// pause is stored too, so every process waits rather than making it worse.
public final class ProviderTokenManager: Sendable {
    public static let maximumAgeSeconds: Int64 = 50 * 60
    public static let minimumIntervalSeconds: Int64 = 20 * 60
    /// How often a cached token is compared with the store (another process may have
    /// refreshed it or recorded a pause).
    public static let storeCheckSeconds: Int64 = 10

    private struct State {
        var token: ProviderToken?
        var pausedUntil: Int64?
        var lastStoreCheck: Int64 = .min
        var minted = 0
    }

    private let key: SigningKey
    private let teamId: String
    private let keyId: String
    private let clock: any TimeSource
    private let store: (any ProviderTokenStore)?
    private let state = Mutex(State())
    /// The key as the store knows it.
    public let identity: SigningIdentity

    public init(key: SigningKey, teamId: String, keyId: String, clock: any TimeSource = SystemClock(),
                store: (any ProviderTokenStore)? = nil) {
        self.key = key
        self.teamId = teamId
        self.keyId = keyId
        self.clock = clock
        self.store = store
        identity = SigningIdentity(teamId: teamId, keyId: keyId, keyFingerprint: key.publicKeyFingerprint)
    }

    /// How many tokens this manager has signed (for tests and metrics).
    public var mintedCount: Int { state.withLock { $0.minted } }

    /// Whether tokens are shared through a store.
    public var isShared: Bool { store != nil }

    /// The shared token, minted on first use and when older than 50 minutes.
    public func currentToken() throws(SigningKeyError) -> ProviderToken {
        let now = clock.secondsSince1970()
        return try state.withLock { (state) throws(SigningKeyError) -> ProviderToken in
            if let token = state.token, now - token.issuedAt < Self.maximumAgeSeconds,
               store == nil || now - state.lastStoreCheck < Self.storeCheckSeconds {
                return token
            }
            guard let store else { return try mint(&state, now: now) }
            state.lastStoreCheck = now
            var stored = try Self.storeCall { () throws(ProviderTokenStoreError) in try store.load(identity) }
            if !Self.isFresh(stored.token, now: now) {
                stored = try mintInStore(store, &state, now: now) { current in
                    !Self.isFresh(current.token, now: now)  // false: someone minted meanwhile
                }
            }
            adopt(stored, into: &state)
            guard let token = stored.token else { return try mint(&state, now: now) }
            return token
        }
    }

    /// APNs answered `ExpiredProviderToken` to a request signed with `rejected`. Returns the
    /// token to retry with: a newer one if another caller (or process) already refreshed, a
    /// new one if the 20-minute floor allows, or nil when it does not (retrying would only
    /// fail again).
    public func refresh(after rejected: ProviderToken) throws(SigningKeyError) -> ProviderToken? {
        let now = clock.secondsSince1970()
        return try state.withLock { (state) throws(SigningKeyError) -> ProviderToken? in
            if let token = state.token, token != rejected { return token }
            guard let store else {
                if let token = state.token, now - token.issuedAt < Self.minimumIntervalSeconds { return nil }
                return try mint(&state, now: now)
            }
            let stored = try mintInStore(store, &state, now: now) { current in
                guard let token = current.token else { return true }
                return token == rejected && now - token.issuedAt >= Self.minimumIntervalSeconds
            }
            state.lastStoreCheck = now
            adopt(stored, into: &state)
            guard let token = stored.token, token != rejected else { return nil }
            return token
        }
    }

    /// APNs answered `TooManyProviderTokenUpdates` to a request signed with `token`: pause
    /// sends with this key until 20 minutes after that token was issued (when Apple takes it),
    /// or 20 minutes from now if that has passed already (someone else minted recently).
    /// The pause is stored for every process. Returns its end.
    @discardableResult
    public func pauseAfterTooManyUpdates(_ token: ProviderToken) -> Int64 {
        let now = clock.secondsSince1970()
        let windowEnd = token.issuedAt + Self.minimumIntervalSeconds
        let until = windowEnd > now ? windowEnd : now + Self.minimumIntervalSeconds
        return state.withLock { state -> Int64 in
            let end = max(until, state.pausedUntil ?? 0)
            state.pausedUntil = end
            if let store {
                // Best effort: this process pauses whatever the store says.
                _ = try? store.update(identity) { current in
                    guard (current.pausedUntil ?? 0) < end else { return nil }
                    var next = current
                    next.pausedUntil = end
                    return next
                }
            }
            return end
        }
    }

    /// The end of the current pause (seconds since 1970), or nil when sends may go.
    public func pausedUntil() -> Int64? {
        let now = clock.secondsSince1970()
        return state.withLock { state in
            guard let until = state.pausedUntil, until > now else { return nil }
            return until
        }
    }

    private func adopt(_ stored: SharedTokenState, into state: inout State) {
        if let token = stored.token { state.token = token }
        if let until = stored.pausedUntil, until > (state.pausedUntil ?? 0) { state.pausedUntil = until }
    }

    /// Under the store's lock: signs and stores a new token when `needed` (given the
    /// stored state as it is now) says so; returns the stored state afterwards.
    private func mintInStore(_ store: any ProviderTokenStore, _ state: inout State, now: Int64,
                             needed: (SharedTokenState) -> Bool) throws(SigningKeyError) -> SharedTokenState {
        var signingError: SigningKeyError?
        var minted = false
        let stored = try Self.storeCall { () throws(ProviderTokenStoreError) in
            try store.update(identity) { current in
                guard needed(current) else { return nil }
                do throws(SigningKeyError) {
                    var next = current
                    next.token = try sign(now: now)
                    minted = true
                    return next
                } catch {
                    signingError = error
                    return nil
                }
            }
        }
        if let signingError { throw signingError }
        if minted { state.minted += 1 }
        return stored
    }

    private static func isFresh(_ token: ProviderToken?, now: Int64) -> Bool {
        guard let token else { return false }
        return now - token.issuedAt < maximumAgeSeconds && token.issuedAt <= now + 60
    }

    private func sign(now: Int64) throws(SigningKeyError) -> ProviderToken {
        try ProviderToken.sign(teamId: teamId, keyId: keyId, issuedAt: now, key: key)
    }

    private func mint(_ state: inout State, now: Int64) throws(SigningKeyError) -> ProviderToken {
        let token = try sign(now: now)
        state.token = token
        state.minted += 1
        return token
    }

    private static func storeCall<T>(_ body: () throws(ProviderTokenStoreError) -> T) throws(SigningKeyError) -> T {
        do { return try body() } catch {
            throw SigningKeyError(.tokenStoreFailed, "cannot read or store the shared provider token: \(error.message)")
        }
    }
}
