/// Changes to a campaign's counts by state gathered during a transaction, written at its
/// end by the backend (SQLite adds them to its one row per state, PostgreSQL to its
/// connection's rows).
public struct StateTally: Sendable {
    private var deltas: [Int64: [DeliveryState: Int]] = [:]

    public init() {}

    public mutating func add(_ campaign: Int64, _ state: DeliveryState, _ n: Int) {
        deltas[campaign, default: [:]][state, default: 0] += n
    }

    public mutating func move(_ campaign: Int64, from old: DeliveryState, to new: DeliveryState) {
        add(campaign, old, -1)
        add(campaign, new, 1)
    }

    /// The non-zero changes in (campaign, state) order: two writers applying theirs lock
    /// rows in the same order.
    public var changes: [(campaign: Int64, state: DeliveryState, n: Int)] {
        deltas.keys.sorted().flatMap { campaign in
            deltas[campaign]!.filter { $0.value != 0 }.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { (campaign: campaign, state: $0.key, n: $0.value) }
        }
    }
}
