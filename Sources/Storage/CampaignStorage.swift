/// Everything the gateway keeps durably. SQLite implements it for one gateway process;
/// a server-grade backend (several gateways sharing one queue) would implement the same
/// calls, with `claim` taking a lease instead of relying on start-up recovery.
public protocol CampaignStorage: ProviderTokenStorage, CampaignFilling {
    /// Writes a campaign and all its devices in one transaction; returns only once committed.
    /// Dead tokens (not registered again since) are stored as `skipped`.
    func insert(_ campaign: NewCampaign, deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> InsertOutcome
    func idempotencyRecord(key: String, notBefore: Double) throws(StorageError) -> IdempotencyRecord?
    func purgeIdempotencyKeys(olderThan: Double) throws(StorageError) -> Int

    /// Leases up to `limit` deliveries to `lease.owner` until `now + lease.seconds` (attempt
    /// + 1, fencing number + 1) and returns them: expired leases first (taken over), then
    /// due pending and retrying rows.
    func claim(limit: Int, lease: LeaseTerms, now: Double) throws(StorageError) -> [ClaimedDelivery]
    /// Extends every unexpired lease `lease.owner` holds to `now + lease.seconds`. Returns how many.
    func renewLeases(_ lease: LeaseTerms, now: Double) throws(StorageError) -> Int
    func message(campaign: Int64) throws(StorageError) -> CampaignMessage?
    /// Records results in one transaction; finishes campaigns with nothing left. An update
    /// whose `lease` is no longer the row's (the lease expired and was taken over) changes
    /// nothing: a late answer can never overwrite or double-count. Returns how many counted.
    @discardableResult
    func record(_ updates: [DeliveryUpdate], now: Double) throws(StorageError) -> Int
    /// `record` then `claim` in one transaction: one commit (one fsync) per dispatcher turn.
    /// The claim skips the campaigns of routes `holds` says are held.
    func recordAndClaim(_ updates: [DeliveryUpdate], claimLimit: Int, lease: LeaseTerms, now: Double,
                        holds: ClaimHolds) throws(StorageError) -> [ClaimedDelivery]
    /// For a backend owned by one process (SQLite): at start, every lease a previous owner
    /// left (it is dead: the owner lock says so) is given back at once instead of waiting
    /// for it to expire; the rows become pending again. Returns how many. A shared backend
    /// (PostgreSQL) gives nothing back and returns 0: no instance can tell that another
    /// died, so the next claim of any instance takes a lease over once it has expired.
    func requeueInFlight() throws(StorageError) -> Int
    /// Deliveries not yet in a final state, over all campaigns.
    func queueDepth() throws(StorageError) -> Int
    /// The earliest time something is due after `now`: a retry, a scheduled campaign's
    /// start, an expiry (when the dispatcher should look again).
    func nextDueTime(now: Double) throws(StorageError) -> Double?

    func campaign(id: String) throws(StorageError) -> CampaignSummary?
    /// Newest first; only `owner`'s when given, only `app`'s when given.
    func campaigns(limit: Int, before seq: Int64?, owner: String?, app: String?) throws(StorageError) -> [CampaignSummary]
    /// A page of device results in index order; `states` nil: every state.
    func results(campaign seq: Int64, states: Set<DeliveryState>?, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow]
    /// How many of the campaign's devices in `states` have each APNs reason (devices with
    /// none are left out), most first, then by state and reason. One pass over the
    /// campaign's device rows: asked for on demand, not on every status read.
    func reasonCounts(campaign seq: Int64, states: Set<DeliveryState>) throws(StorageError) -> [ReasonCount]

    // Lifecycle. A cancelled or expired campaign sends nothing more at once (claims skip
    // it); `closeStopped` then ends its unsent devices in batches.
    /// Pause, resume or cancel; idempotent (`unchanged`), refused on a finished campaign.
    func changeLifecycle(id: String, _ action: LifecycleAction, now: Double) throws(StorageError) -> LifecycleOutcome
    /// Ends up to `limit` unsent devices of cancelled and expired campaigns; returns how many.
    func closeStopped(now: Double, limit: Int) throws(StorageError) -> Int
    /// The open batch of `campaign.finished` events (fixed once formed), else the next one.
    func pendingCampaignEvents(limit: Int) throws(StorageError) -> [CampaignEvent]
    func acknowledgeCampaignEvents(through seq: Int64) throws(StorageError)

    // Retention.
    /// Deletes up to `limit` device rows of the oldest campaign finished before `cutoff`,
    /// and the campaign itself (counts, idempotency keys, events) once its rows are gone.
    /// Dead-token records are kept.
    func purgeFinished(before cutoff: Double, limit: Int) throws(StorageError) -> PurgeProgress
    /// Whether purged rows leave free pages for `reclaimFreePages` to give back (SQLite's
    /// incremental vacuum). False where the database reuses that space on its own
    /// (PostgreSQL's autovacuum), and `reclaimFreePages` has nothing to do.
    var reclaimsFreePages: Bool { get }
    /// Gives up to `maxPages` free pages back to the file system; returns how many.
    func reclaimFreePages(maxPages: Int) throws(StorageError) -> Int
    func pageStatistics() throws(StorageError) -> PageStatistics

    /// Records that the app registered the token again (so it is no longer skipped).
    /// `app`: the token is the app's (a dead token is one app's; nil: any app's).
    func registerToken(_ token: String, app: String?, atMilliseconds: Int64) throws(StorageError) -> DeadToken?
    /// Dead tokens of `app` (nil: of every app).
    func deadTokens(app: String?, sinceMilliseconds: Int64, after: (Int64, String)?, limit: Int) throws(StorageError) -> [DeadToken]
    /// Records an app's Live Activity token (push-to-start, or an activity's update token),
    /// registering it as `registerToken` does (a dead token reported again lives again),
    /// unless it is new to the activity (or the app) and that one has `limits` tokens
    /// already. A token reported again only has its time renewed, full or not. `replacing`:
    /// the token it replaces, not counted (the caller forgets it once this one is kept, so
    /// a refused report loses nothing).
    func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds: Int64,
                                   limits: LiveActivityLimits, replacing: String?) throws(StorageError) -> LiveActivityRegistration
    /// Removes up to `limit` update tokens last registered before `cutoff` (the retention
    /// of `storage.liveActivityTokenRetentionHours`); returns how many. Push-to-start
    /// tokens, and dead-or-alive records, stay.
    func purgeLiveActivityTokens(registeredBeforeMilliseconds cutoff: Int64, limit: Int) throws(StorageError) -> Int
    /// Removes `app`'s registered Live Activity token (the app says ActivityKit replaced
    /// it). Returns whether it was registered. Its dead-or-alive record stays.
    func forgetLiveActivityToken(app: String, token: String) throws(StorageError) -> Bool
    /// The update tokens of `activity` that are not dead, oldest registration first.
    func liveActivityTokens(app: String, activity: String) throws(StorageError) -> [String]
    /// Rows written before campaigns named their app ("") become `app`'s: the one app of a
    /// single-app configuration. Returns how many campaigns.
    func adoptUnnamedRows(app: String) throws(StorageError) -> Int

    func pendingFeedback(limit: Int) throws(StorageError) -> [FeedbackItem]
    func acknowledgeFeedback(through seq: Int64) throws(StorageError)

    /// nil when a write transaction commits; otherwise why not.
    func checkWritable(now: Double) -> String?
    /// nil when the database answers a read and the last write (if any) worked; writes nothing.
    func checkReady() -> String?
    /// Campaigns that failed since `since` because a stored segment of theirs does not
    /// decode (`CampaignSummary.failure` says which and why), newest first: what readiness
    /// and the log report. A backend that stores no segments has none.
    func failedCampaigns(since: Double, limit: Int) throws(StorageError) -> [CampaignSummary]
    /// Bytes this process wrote to the store's write-ahead log since it opened it (SQLite:
    /// WAL frames, each a page and its 24-byte header; checkpoints' copies into the
    /// database file are not counted); nil where the server keeps the log (PostgreSQL).
    /// Read without waiting for a transaction in progress.
    var journalBytesWritten: Int64? { get }
}

extension CampaignStorage {
    public var journalBytesWritten: Int64? { nil }

    public func recordAndClaim(_ updates: [DeliveryUpdate], claimLimit: Int, lease: LeaseTerms,
                               now: Double) throws(StorageError) -> [ClaimedDelivery] {
        try recordAndClaim(updates, claimLimit: claimLimit, lease: lease, now: now, holds: .none)
    }

    public func campaigns(limit: Int, before seq: Int64?) throws(StorageError) -> [CampaignSummary] {
        try campaigns(limit: limit, before: seq, owner: nil, app: nil)
    }

    public func campaigns(limit: Int, before seq: Int64?, owner: String?) throws(StorageError) -> [CampaignSummary] {
        try campaigns(limit: limit, before: seq, owner: owner, app: nil)
    }

    /// With no limits: the dead-token record the registration revived, if any.
    public func registerLiveActivityToken(_ token: LiveActivityToken, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        if case .registered(let revived) = try registerLiveActivityToken(token, atMilliseconds: time, limits: .unlimited, replacing: nil) { return revived }
        return nil
    }

    public func registerToken(_ token: String, atMilliseconds time: Int64) throws(StorageError) -> DeadToken? {
        try registerToken(token, app: nil, atMilliseconds: time)
    }

    public func deadTokens(sinceMilliseconds since: Int64, after cursor: (Int64, String)?, limit: Int) throws(StorageError) -> [DeadToken] {
        try deadTokens(app: nil, sinceMilliseconds: since, after: cursor, limit: limit)
    }
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

extension CampaignStorage {
    /// Every device's result, in index order.
    public func results(campaign seq: Int64, offset: Int, limit: Int) throws(StorageError) -> [DeliveryResultRow] {
        try results(campaign: seq, states: nil, offset: offset, limit: limit)
    }
}
