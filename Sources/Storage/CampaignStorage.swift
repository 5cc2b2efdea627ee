/// Everything the gateway keeps durably. SQLite implements it for one gateway process;
/// a server-grade backend (several gateways sharing one queue) would implement the same
/// calls, with `claim` taking a lease instead of relying on start-up recovery.
public protocol CampaignStorage: ProviderTokenStorage {
    /// Writes a campaign and all its devices in one transaction; returns only once committed.
    /// Dead tokens (not registered again since) are stored as `skipped`.
    func insert(_ campaign: NewCampaign, deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> InsertOutcome
    func idempotencyRecord(key: String, notBefore: Double) throws(StorageError) -> IdempotencyRecord?
    func purgeIdempotencyKeys(olderThan: Double) throws(StorageError) -> Int

    /// Marks up to `limit` due deliveries in flight (attempt + 1) and returns them.
    func claim(limit: Int, now: Double) throws(StorageError) -> [ClaimedDelivery]
    func message(campaign: Int64) throws(StorageError) -> CampaignMessage?
    /// Records results in one transaction; finishes campaigns with nothing left.
    func record(_ updates: [DeliveryUpdate], now: Double) throws(StorageError)
    /// `record` then `claim` in one transaction: one commit (one fsync) per dispatcher turn.
    func recordAndClaim(_ updates: [DeliveryUpdate], claimLimit: Int, now: Double) throws(StorageError) -> [ClaimedDelivery]
    /// After a crash: everything left in flight becomes pending again. Returns how many.
    func requeueInFlight() throws(StorageError) -> Int
    /// Deliveries not yet in a final state, over all campaigns.
    func queueDepth() throws(StorageError) -> Int
    /// The earliest time a retrying delivery is due, if any.
    func nextDueTime() throws(StorageError) -> Double?

    func campaign(id: String) throws(StorageError) -> CampaignSummary?
    func campaigns(limit: Int, before seq: Int64?) throws(StorageError) -> [CampaignSummary]
    func results(campaign seq: Int64, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow]

    /// Records that the app registered the token again (so it is no longer skipped).
    func registerToken(_ token: String, atMilliseconds: Int64) throws(StorageError) -> DeadToken?
    func deadTokens(sinceMilliseconds: Int64, after: (Int64, String)?, limit: Int) throws(StorageError) -> [DeadToken]

    func pendingFeedback(limit: Int) throws(StorageError) -> [FeedbackItem]
    func acknowledgeFeedback(through seq: Int64) throws(StorageError)

    /// nil when a write transaction commits; otherwise why not.
    func checkWritable(now: Double) -> String?
    /// nil when the database answers a read and the last write (if any) worked; writes nothing.
    func checkReady() -> String?
}

/// The provider token every process signing with one key shares (Apple allows one per
/// key per 20 minutes). `updateProviderToken` runs `change` under a lock that every
/// process sharing the storage respects, so a caller re-checks there before minting.
public protocol ProviderTokenStorage: Sendable {
    func providerToken(_ key: SigningKeyName) throws(StorageError) -> StoredProviderToken
    /// `change` gets the stored value under the lock and returns what to store (nil:
    /// nothing). Returns the value stored afterwards.
    func updateProviderToken(_ key: SigningKeyName,
                             _ change: (StoredProviderToken) -> StoredProviderToken?) throws(StorageError) -> StoredProviderToken
}
