/// Slots for keys, numbered in the order the keys were first added, with the key looked
/// up last tried before any hashing: for keys that come in runs (a turn's devices come
/// campaign by campaign, segment by segment), so a run costs one lookup, not one per item.
public struct KeyedSlots<Key: Hashable> {
    /// Each slot's key, by slot.
    public private(set) var keys: [Key] = []
    private var slots: [Key: Int] = [:]
    private var last = -1

    public init() {}

    /// The key's slot; nil until it is added.
    public mutating func slot(of key: Key) -> Int? {
        if last >= 0, keys[last] == key { return last }
        guard let found = slots[key] else { return nil }
        last = found
        return found
    }

    /// The next slot, for a key that has none yet (`slot(of:)` answered nil).
    public mutating func add(_ key: Key) -> Int {
        last = keys.count
        slots[key] = last
        keys.append(key)
        return last
    }
}

extension KeyedSlots: Sendable where Key: Sendable {}
