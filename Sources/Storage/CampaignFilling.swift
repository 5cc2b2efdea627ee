/// A campaign too big for one request: created with `NewCampaign.filling` (no devices,
/// not sent), given its devices in numbered parts, then started. Each part is idempotent:
/// sent again with the same content it is answered as before; with other content it is
/// refused (`partConflict`).
public protocol CampaignFilling: Sendable {
    /// Appends one part's devices (the next indices, in the order they arrive; dead tokens
    /// skipped as at intake). Throws `campaignNotFound`, `notFilling` or `partConflict`.
    func appendDevices(campaign id: String, part: Int, requestSHA256: String,
                       deliveries: some Sequence<NewDelivery>, now: Double) throws(StorageError) -> AppendOutcome
    /// Makes the campaign sendable, in one transaction with the check of its device count:
    /// `expectedDevices` (the count the send guard passed; nil checks none) differing from
    /// the stored count (a part stored since it was read) is `devicesChanged`, nothing
    /// started. A campaign created without a lane gets `transactional` up to
    /// `transactionalMaxDevices` devices (`lanes.transactionalMaxDevices`), else `bulk`.
    /// Throws `campaignNotFound`; refused (`notFilling`) when it has no device.
    func finishFilling(campaign id: String, expectedDevices: Int?, transactionalMaxDevices: Int,
                       now: Double) throws(StorageError) -> FillOutcome
}

/// One part as stored.
public struct PartReceipt: Sendable, Equatable {
    public var part: Int
    public var firstIndex: Int
    public var devices: Int
    public var skipped: Int

    public init(part: Int, firstIndex: Int, devices: Int, skipped: Int) {
        self.part = part
        self.firstIndex = firstIndex
        self.devices = devices
        self.skipped = skipped
    }
}

public enum AppendOutcome: Sendable, Equatable {
    case appended(PartReceipt)
    /// The same part with the same content was appended before: nothing written.
    case alreadyAppended(PartReceipt)
}

public enum FillOutcome: Sendable, Equatable {
    case started(CampaignSummary)
    /// Already started.
    case unchanged(CampaignSummary)
    /// Not started: its device count (in the summary) is not the one expected, so the
    /// guard's check must be made again against it.
    case devicesChanged(CampaignSummary)
}
