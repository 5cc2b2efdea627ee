import APNsCore
import CurlClient
import Synchronization
import Timing
import Crypto

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
///
/// When APNs refuses the key itself (`KeyHold.stopsTheKey`: InvalidProviderToken, a young
/// token answered ExpiredProviderToken, …), sends with it stop in this process: `admit`
/// holds every send, and lets one through as a probe after `probeBackoff` (doubling per
/// refused probe); the first answer that is not about the key ends the stop. Pause and stop
/// are one `KeyHold`, read by `hold()`.
public final class ProviderTokenManager: Sendable, RefusedKeyListener {
    public static let maximumAgeSeconds: Int64 = 50 * 60
    public static let minimumIntervalSeconds: Int64 = 20 * 60
    /// How often a cached token is compared with the store (another process may have
    /// refreshed it or recorded a pause).
    public static let storeCheckSeconds: Int64 = 10
    /// Between probes while the key is stopped: a minute after the stop, doubling after
    /// each refused probe, at most 30 minutes.
    public static let defaultProbeBackoff = Backoff(initial: .seconds(60), maximum: .seconds(30 * 60))

    struct State {
        var token: ProviderToken?
        var pausedUntil: Int64?
        var lastStoreCheck: Int64 = .min
        var minted = 0
        var stop: KeyStop?
    }

    private let key: SigningKey
    private let teamId: String
    private let keyId: String
    private let clock: any TimeSource
    private let store: (any ProviderTokenStore)?
    /// `store != nil`, kept: comparing the optional existential copies it (~140
    /// instructions on every send, in `cachedToken`).
    private let hasStore: Bool
    let state = Mutex(State())
    /// Whether `state.stop` is set: lets `accepted` skip the lock on every answer.
    private let isStopped = Atomic<Bool>(false)
    /// Between probes while the key is stopped.
    private let probeBackoff: Backoff
    /// The key as the store knows it.
    public let identity: SigningIdentity
    /// Withdrawn when the key is paused or stopped: requests signed with it that have not
    /// gone out yet are taken back (`keyStopped`) instead of meeting the same refusal.
    public let withdrawal = Withdrawal()

    public init(key: SigningKey, teamId: String, keyId: String, clock: any TimeSource,
                store: (any ProviderTokenStore)? = nil, probeBackoff: Backoff = ProviderTokenManager.defaultProbeBackoff) {
        self.key = key
        self.teamId = teamId
        self.keyId = keyId
        self.clock = clock
        self.store = store
        hasStore = store != nil
        self.probeBackoff = probeBackoff
        identity = SigningIdentity(teamId: teamId, keyId: keyId, keyFingerprint: key.publicKeyFingerprint)
    }

    /// Whether tokens are shared through a store.
    public var isShared: Bool { hasStore }

    /// The shared token, minted on first use and when older than 50 minutes.
    public func currentToken() throws(SigningKeyError) -> ProviderToken {
        let now = clock.secondsSince1970()
        return try state.withLock { (state) throws(SigningKeyError) -> ProviderToken in
            if let token = cachedToken(state, now: now) { return token }
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

    /// Whether a send may go now, and signed with which token. `held` while the key is
    /// paused or stopped; while stopped, one send at a time goes as a probe once it is due.
    public func admit() throws(SigningKeyError) -> Admission {
        let now = clock.secondsSince1970()
        var probe = false
        // The cached token is taken under the same lock and clock reading as the hold
        // check: a second lock and clock read per send otherwise (`currentToken`).
        let admission = state.withLock { state -> Admission? in
            if let until = state.pausedUntil, until > now { return .held(pauseHold(until)) }
            if var stop = state.stop {
                guard now >= stop.hold.until, !stop.probeInFlight else { return .held(stop.hold) }
                stop.probeInFlight = true
                state.stop = stop
                probe = true
            }
            return cachedToken(state, now: now).map { .send($0, probe: probe) }
        }
        if let admission { return admission }
        do { return .send(try currentToken(), probe: probe) } catch {
            if probe { probeEnded() }
            throw error
        }
    }

    /// APNs refused `token` for the key: `TooManyProviderTokenUpdates` pauses it (for every
    /// process sharing the store), a reason that `KeyHold.stopsTheKey` stops it (this
    /// process). A refusal of a request sent before the stop changes nothing; a refused
    /// probe doubles the wait before the next. Returns the hold.
    @discardableResult
    public func refused(_ reason: APNsReason, token: ProviderToken, probe: Bool) -> KeyHold {
        if reason == .tooManyProviderTokenUpdates {
            let until = pauseAfterTooManyUpdates(token)
            if probe { probeEnded() }
            let hold = pauseHold(until)
            withdrawal.withdraw(because: hold.explanation)
            return hold
        }
        let now = clock.secondsSince1970()
        let explanation = KeyHold.explanation(reason, keyId: keyId, teamId: teamId, tokenAgeSeconds: now - token.issuedAt)
        let (hold, began) = state.withLock { state -> (KeyHold, Bool) in
            if var stop = state.stop {
                guard probe else { return (stop.hold, false) }
                stop.failedProbes += 1
                stop.probeInFlight = false
                stop.hold.reason = reason
                stop.hold.explanation = explanation
                stop.hold.until = now + probeDelay(afterFailedProbes: stop.failedProbes)
                state.stop = stop
                return (stop.hold, false)
            }
            let hold = KeyHold(kind: .stopped, reason: reason, keyId: keyId, since: now,
                               until: now + probeDelay(afterFailedProbes: 0), explanation: explanation)
            state.stop = KeyStop(hold: hold)
            isStopped.store(true, ordering: .relaxed)
            return (hold, true)
        }
        // What was admitted before the stop and has not gone out is taken back.
        if began { withdrawal.withdraw(because: hold.explanation) }
        return hold
    }

    /// A ticket for a request admitted now: a pause or stop after this takes it back if it
    /// has not gone out.
    public func ticket() -> KeyTicket { KeyTicket(withdrawal: withdrawal, holder: self, epoch: Withdrawal.epoch) }

    /// The transport's word that an answer to a request under this key was a 403.
    public func refusedOnTheWire(status: Int, body: [UInt8]) {
        refusedOnTheWire(APNsErrorBody(body, status: status).reason)
    }

    /// The transport read an answer refusing the key (403 with a reason that
    /// `KeyHold.stopsTheKey`; `ExpiredProviderToken` aside, which a new token may cure): the
    /// key stops here, on the transport's thread, before the answer reaches its caller, so
    /// that nothing waiting behind it is written meanwhile. The caller's `refused` then
    /// finds the stop in place (or, for a probe, counts it).
    ///
    /// The transport thread never waits here: the lock can be held by a send reading the
    /// token store. Then only the withdrawal is made (lock-free), and the caller's `refused`
    /// stops the key a moment later.
    func refusedOnTheWire(_ reason: APNsReason) {
        guard KeyHold.stopsTheKey(reason), reason != .expiredProviderToken, !isStopped.load(ordering: .relaxed) else { return }
        let explanation = KeyHold.explanation(reason, keyId: keyId, teamId: teamId, tokenAgeSeconds: 0)
        let now = clock.secondsSince1970()
        let stoppedHere = state.withLockIfAvailable { state -> Bool in
            guard state.stop == nil else { return false }
            state.stop = KeyStop(hold: KeyHold(kind: .stopped, reason: reason, keyId: keyId, since: now,
                                               until: now + probeDelay(afterFailedProbes: 0), explanation: explanation))
            isStopped.store(true, ordering: .relaxed)
            return true
        }
        if stoppedHere != false { withdrawal.withdraw(because: explanation) }
    }

    /// APNs answered a request signed with the key with something that is not about the
    /// key (delivered, or a device's own reason): a stop ends.
    public func accepted() {
        guard isStopped.load(ordering: .relaxed) else { return }
        state.withLock { $0.stop = nil }
        isStopped.store(false, ordering: .relaxed)
    }

    /// A probe ended without an answer about the key (no answer at all): the stop stays,
    /// and the next probe goes after the same wait.
    public func probeEnded() {
        let now = clock.secondsSince1970()
        state.withLock { state in
            guard var stop = state.stop, stop.probeInFlight else { return }
            stop.probeInFlight = false
            stop.hold.until = now + probeDelay(afterFailedProbes: stop.failedProbes)
            state.stop = stop
        }
    }

    /// The token in `state`, if young enough and (with a store) compared with the store
    /// recently enough to be used as it is.
    private func cachedToken(_ state: State, now: Int64) -> ProviderToken? {
        guard let token = state.token, now - token.issuedAt < Self.maximumAgeSeconds,
              !hasStore || now - state.lastStoreCheck < Self.storeCheckSeconds else { return nil }
        return token
    }

    /// The current pause or stop, nil while sends go.
    public func hold() -> KeyHold? {
        let now = clock.secondsSince1970()
        return state.withLock { state in
            if let until = state.pausedUntil, until > now { return pauseHold(until) }
            return state.stop?.hold
        }
    }

    private func pauseHold(_ until: Int64) -> KeyHold {
        .paused(keyId: keyId, since: until - Self.minimumIntervalSeconds, until: until)
    }

    /// Seconds before the next probe: the backoff's first step after the stop, doubling per
    /// refused probe.
    private func probeDelay(afterFailedProbes failed: Int) -> Int64 {
        max(1, Int64(probeBackoff.delay(afterFailures: failed + 1, unit: 0).inSeconds.rounded(.up)))
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

    /// What `admit` decided.
    public enum Admission: Sendable, Equatable {
        /// Send, signed with this token. `probe`: the one request let through while the key
        /// is stopped; its answer is reported with `refused`, `accepted` or `probeEnded`.
        case send(ProviderToken, probe: Bool)
        /// Do not send: the key is paused or stopped.
        case held(KeyHold)
    }

    private static func storeCall<T>(_ body: () throws(ProviderTokenStoreError) -> T) throws(SigningKeyError) -> T {
        do { return try body() } catch {
            throw SigningKeyError(.tokenStoreFailed, "cannot read or store the shared provider token: \(error.message)")
        }
    }
}
