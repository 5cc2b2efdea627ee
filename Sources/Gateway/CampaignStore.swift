import APNs
import StrictJSON
import Synchronization

/// What became of one device of a campaign.
public struct DeviceOutcome: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        case pending, delivered, failed, unregistered, dryRun = "dry-run"
    }

    public var state: State
    public var status: Int?
    public var reason: String?
    public var apnsID: String?
    /// Apple's timestamp for a dead token, in milliseconds.
    public var timestampMilliseconds: Int64?

    public static let pending = DeviceOutcome(state: .pending)

    public init(state: State, status: Int? = nil, reason: String? = nil, apnsID: String? = nil, timestampMilliseconds: Int64? = nil) {
        self.state = state
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestampMilliseconds = timestampMilliseconds
    }

    public init(_ result: DeliveryResult) {
        switch result {
        case .delivered(let id):
            self.init(state: .delivered, status: 200, apnsID: id)
        case .failed(let status, let reason):
            self.init(state: .failed, status: status, reason: reason.rawValue)
        case .unregistered(let reason, let timestamp):
            self.init(state: .unregistered, status: 410, reason: reason.rawValue, timestampMilliseconds: timestamp)
        case .transportFailed(let failure):
            self.init(state: .failed, reason: failure.code.rawValue)
        case .dryRun(let prepared):
            self.init(state: .dryRun, apnsID: prepared.headers.first { $0.name == "apns-id" }?.value)
        }
    }
}

/// One accepted campaign and its devices' outcomes, in device order.
public struct CampaignRecord: Sendable {
    public var id: String
    public var createdAt: Double
    public var dryRun: Bool
    public var tokens: [String]
    public var outcomes: [DeviceOutcome]
    public var finishedAt: Double?

    public var counts: [DeviceOutcome.State: Int] {
        var counts: [DeviceOutcome.State: Int] = [:]
        for outcome in outcomes { counts[outcome.state, default: 0] += 1 }
        return counts
    }

    public var status: String {
        if finishedAt != nil { return "completed" }
        return outcomes.contains { $0.state != .pending } ? "sending" : "queued"
    }
}

/// Campaigns kept in memory for this process's life. (Durable storage is the SQLite
/// outbox's job; this store is what the service runs on until then.)
public final class InMemoryCampaignStore: Sendable {
    private let campaigns = Mutex<[String: CampaignRecord]>([:])

    public init() {}

    public func insert(_ record: CampaignRecord) {
        campaigns.withLock { $0[record.id] = record }
    }

    public func record(_ outcome: DeviceOutcome, campaign id: String, device index: Int) {
        campaigns.withLock { campaigns in
            guard campaigns[id]?.outcomes.indices.contains(index) == true else { return }
            campaigns[id]?.outcomes[index] = outcome
        }
    }

    public func finish(_ id: String, at time: Double) {
        campaigns.withLock { $0[id]?.finishedAt = time }
    }

    public func get(_ id: String) -> CampaignRecord? {
        campaigns.withLock { $0[id] }
    }
}
