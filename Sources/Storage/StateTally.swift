/// Changes to a campaign's counts by state gathered during a transaction, written at its
/// end by the backend (SQLite adds them to its one row per state, PostgreSQL to its
/// connection's rows).
///
/// Counted for every device a turn claims and records, so nothing is hashed per device:
/// a row of counts per campaign, looked up once per run of a campaign (`KeyedSlots`).
public struct StateTally: Sendable {
    private static let states = DeliveryState.allCases.count
    private var slots = KeyedSlots<Int64>()
    private var campaigns: [Int64] { slots.keys }
    /// `states` counts per campaign, by slot, then by state raw value.
    private var counts: [Int] = []

    public init() {}

    private mutating func slot(_ campaign: Int64) -> Int {
        if let known = slots.slot(of: campaign) { return known }
        counts.append(contentsOf: repeatElement(0, count: Self.states))
        return slots.add(campaign)
    }

    public mutating func add(_ campaign: Int64, _ state: DeliveryState, _ n: Int) {
        counts[slot(campaign) * Self.states + state.rawValue] += n
    }

    public mutating func move(_ campaign: Int64, from old: DeliveryState, to new: DeliveryState) {
        let row = slot(campaign) * Self.states
        counts[row + old.rawValue] -= 1
        counts[row + new.rawValue] += 1
    }

    /// The non-zero changes in (campaign, state) order: two writers applying theirs lock
    /// rows in the same order.
    public var changes: [(campaign: Int64, state: DeliveryState, n: Int)] {
        campaigns.indices.sorted { campaigns[$0] < campaigns[$1] }.flatMap { slot in
            DeliveryState.allCases.compactMap { state in
                let n = counts[slot * Self.states + state.rawValue]
                return n == 0 ? nil : (campaign: campaigns[slot], state: state, n: n)
            }
        }
    }

    /// Each campaign's sum of the changes to the states `include` picks, in the order the
    /// campaigns were first counted.
    public func totals(where include: (DeliveryState) -> Bool) -> [(campaign: Int64, n: Int)] {
        let picked = DeliveryState.allCases.filter(include)
        return campaigns.indices.map { slot in
            (campaigns[slot], picked.reduce(0) { $0 + counts[slot * Self.states + $1.rawValue] })
        }
    }
}
