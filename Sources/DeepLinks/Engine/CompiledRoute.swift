/// One route laid out for the canonicaliser's hot path: flat arrays indexed by segment
/// and by query slot, so building a result copies no enum payloads.
final class CompiledRoute: Sendable {
    enum SegmentKind: UInt8, Sendable {
        case literal, parameter, lowercasedParameter, wildcard
    }

    let route: Route
    /// Its position in the table (and in `routes`).
    let index: Int
    let segmentKinds: [SegmentKind]
    /// Per segment: the parameter's name ("" for literals).
    let parameterNames: [String]
    /// Parameters and `*` (the size of a result's `params`).
    let parameterCount: Int
    /// Query slots in canonical order: the route's declared keys, then the table's
    /// passthrough keys.
    let slotKeys: [[UInt8]]
    let slotNames: [String]
    let slotTypes: [ValueType]
    let slotLowercased: [Bool]
    /// Slots the route marks required.
    let requiredSlots: [Int]

    init(route: Route, index: Int, passthroughQuery: [String]) {
        self.route = route
        self.index = index
        var kinds: [SegmentKind] = []
        var names: [String] = []
        for segment in route.segments {
            switch segment {
            case .literal: kinds.append(.literal); names.append("")
            case .parameter(let name, let type):
                kinds.append(type.isUUID ? .lowercasedParameter : .parameter)
                names.append(name)
            case .wildcard: kinds.append(.wildcard); names.append(Route.wildcardParameterName)
            }
        }
        segmentKinds = kinds
        parameterNames = names
        parameterCount = kinds.filter { $0 != .literal }.count
        slotNames = route.query.map(\.key) + passthroughQuery
        slotKeys = slotNames.map { Array($0.utf8) }
        slotTypes = route.query.map(\.type) + passthroughQuery.map { _ in .string }
        slotLowercased = slotTypes.map(\.isUUID)
        requiredSlots = route.query.indices.filter { route.query[$0].required }
    }

    /// The slot of a decoded query key, or nil if the route neither declares nor passes it.
    @inline(__always)
    func slot(for key: UnsafeBufferPointer<UInt8>) -> Int? {
        for (slot, candidate) in slotKeys.enumerated() where Bytes.equal(candidate, key) { return slot }
        return nil
    }
}
