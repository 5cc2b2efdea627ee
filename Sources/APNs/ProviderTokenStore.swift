/// Which signing key a shared provider token belongs to. The fingerprint (SHA-256 of the
/// public key, hex) makes a replaced `.p8` under the same key id a new key with a new token.
public struct SigningIdentity: Sendable, Hashable {
    public var teamId: String
    public var keyId: String
    public var keyFingerprint: String

    public init(teamId: String, keyId: String, keyFingerprint: String) {
        self.teamId = teamId
        self.keyId = keyId
        self.keyFingerprint = keyFingerprint
    }
}

/// What every process signing with one key shares: its current token, and the end of a
/// pause APNs imposed (`TooManyProviderTokenUpdates`), in seconds since 1970.
public struct SharedTokenState: Sendable, Equatable {
    public var token: ProviderToken?
    public var pausedUntil: Int64?

    public init(token: ProviderToken? = nil, pausedUntil: Int64? = nil) {
        self.token = token
        self.pausedUntil = pausedUntil
    }
}

/// Where provider tokens are kept so that every process (serve, send, a restart, a second
/// instance) signs with the one token Apple allows per key and 20–60-minute window.
/// The gateway's storage implements it; the manager works without one (one process).
public protocol ProviderTokenStore: Sendable {
    /// The stored state, read without taking the lock.
    func load(_ identity: SigningIdentity) throws(ProviderTokenStoreError) -> SharedTokenState
    /// Takes the store's lock (held across processes), passes `change` the state as it is
    /// now and stores what it returns (nil: store nothing). Returns the state afterwards.
    /// Because `change` sees the state under the lock, a caller that found the token stale
    /// re-checks it there and mints only if nobody did meanwhile.
    func update(_ identity: SigningIdentity,
                _ change: (SharedTokenState) -> SharedTokenState?) throws(ProviderTokenStoreError) -> SharedTokenState
}

/// The token store could not be read or written (the database is locked, gone, full).
public struct ProviderTokenStoreError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
