import Payloads
import Storage

/// A campaign too big for one request (`server.maxBodyBytes`): created without devices,
/// given them in numbered parts, then started. Memory stays that of one part: each part
/// goes to storage as it is read, and nothing of the campaign's earlier parts is held.
extension DurableCampaigns {
    /// Writes the campaign with no devices and `filling` set: nothing is sent until
    /// `start`. Every device of it will get the plan's shared body (a part is tokens
    /// only), so a plan whose body cannot be built is refused before this.
    public func acceptFilling(_ plan: CampaignPlan, dryRun: Bool, idempotency: (key: String, sha256: String)?,
                              app: String = "", environment: String = "", owner: String = "") throws(StorageError) -> Accepted {
        var campaign = newCampaign(plan, dryRun: dryRun, idempotency: idempotency, app: app, environment: environment, owner: owner)
        campaign.filling = true
        switch try storage.insert(campaign, deliveries: EmptyCollection<NewDelivery>(), now: clock.wallSeconds()) {
        case .created(let devices, let skipped):
            return .created(id: campaign.id, devices: devices, skipped: skipped, dryRun: dryRun)
        case .keyAlreadyUsed(let record):
            return try replay(record, requestSHA256: idempotency?.sha256 ?? "")
        }
    }

    /// Appends one part's tokens (checked by the caller) with the campaign's shared body.
    /// `sha256` is the part's request body's hash: the same part again with the same hash
    /// is `alreadyAppended`, with another `partConflict`.
    public func appendPart(campaign id: String, part: Int, sha256: String,
                           tokens: some Sequence<String>) throws(StorageError) -> AppendOutcome {
        return try storage.appendDevices(campaign: id, part: part, requestSHA256: sha256,
                                         deliveries: tokens.lazy.map { NewDelivery(token: $0) }, now: clock.wallSeconds())
    }

    /// Makes a filled campaign sendable and wakes the dispatcher. The send guard is the
    /// caller's to check first, against the campaign's device count: that count is
    /// `expectedDevices`, and a campaign that has another one by the time storage starts it
    /// (a part stored meanwhile) is `devicesChanged`, not started. Its lane, unless the
    /// campaign named one, comes from `lanes.transactionalMaxDevices`.
    public func start(campaign id: String, expectedDevices: Int?) throws(StorageError) -> FillOutcome {
        let outcome = try storage.finishFilling(campaign: id, expectedDevices: expectedDevices,
                                                transactionalMaxDevices: transactionalMaxDevices, now: clock.wallSeconds())
        if case .started = outcome { dispatcher.wake() }
        return outcome
    }
}
