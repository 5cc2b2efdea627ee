import APNs
import Storage

/// The provider-token manager's store, kept in the gateway's storage: what lets `serve`,
/// `send`, a restarted process and a second instance sign with one token per key.
public struct SharedProviderTokens: ProviderTokenStore {
    let storage: any ProviderTokenStorage

    public init(storage: any ProviderTokenStorage) {
        self.storage = storage
    }

    public func load(_ identity: SigningIdentity) throws(ProviderTokenStoreError) -> SharedTokenState {
        do { return Self.state(try storage.providerToken(Self.name(identity)), keyId: identity.keyId) } catch {
            throw ProviderTokenStoreError(error.description)
        }
    }

    public func update(_ identity: SigningIdentity,
                       _ change: (SharedTokenState) -> SharedTokenState?) throws(ProviderTokenStoreError) -> SharedTokenState {
        do {
            let stored = try storage.updateProviderToken(Self.name(identity)) { current in
                change(Self.state(current, keyId: identity.keyId)).map {
                    StoredProviderToken(compact: $0.token?.compact, issuedAt: $0.token?.issuedAt, pausedUntil: $0.pausedUntil)
                }
            }
            return Self.state(stored, keyId: identity.keyId)
        } catch {
            throw ProviderTokenStoreError(error.description)
        }
    }

    static func name(_ identity: SigningIdentity) -> SigningKeyName {
        SigningKeyName(teamId: identity.teamId, keyId: identity.keyId, fingerprint: identity.keyFingerprint)
    }

    static func state(_ stored: StoredProviderToken, keyId: String) -> SharedTokenState {
        var token: ProviderToken?
        if let compact = stored.compact, let issuedAt = stored.issuedAt {
            token = ProviderToken(compact: compact, issuedAt: issuedAt, keyId: keyId)
        }
        return SharedTokenState(token: token, pausedUntil: stored.pausedUntil)
    }
}
