/// One route laid out for the canonicaliser's hot path: flat arrays indexed by segment
/// and by query slot, so building a result copies no enum payloads.
final class CompiledRoute: Sendable {
    enum SegmentKind: UInt8, Sendable {
        case literal, parameter, lowercasedParameter, wildcard
    }

    let route: Route
    /// Per segment: the parameter's name ("" for literals).
    let parameterNames: [String]
    /// Parameters and `*` (the size of a result's `params`).
    let parameterCount: Int
    /// Query slots in canonical order: the route's declared keys, then the table's
    /// passthrough keys.
    let slotKeys: [[UInt8]]
    let slotNames: [String]
    let slotTypes: [ValueType]
    /// What the canonicaliser reads for every link (segment kinds, slots, checks).
    let layout: Layout
    private let memory: FrozenMemory

    /// What checking and printing a link of this route reads: plain values and pointers
    /// into memory the route owns, so reading them retains nothing (valid while the route
    /// lives; its table keeps it).
    struct Layout: @unchecked Sendable {  // immutable memory
        /// The route's position in the table.
        let index: Int
        let segmentKinds: UnsafeBufferPointer<SegmentKind>
        /// Per query slot, in canonical order.
        let slotKeys: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>
        let slotChecks: UnsafeBufferPointer<ValueCheck>
        let slotLowercased: UnsafeBufferPointer<Bool>
        let requiredSlots: UnsafeBufferPointer<Int>

        /// The slot of a decoded query key, or nil if the route neither declares nor passes it.
        @inline(__always)
        func slot(for key: UnsafeBufferPointer<UInt8>) -> Int? {
            for slot in 0..<slotKeys.count where Bytes.equal(slotKeys[slot], key) { return slot }
            return nil
        }
    }

    init(route: Route, index: Int, passthroughQuery: [String]) {
        self.route = route
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
        parameterNames = names
        parameterCount = kinds.filter { $0 != .literal }.count
        let slotNames = route.query.map(\.key) + passthroughQuery
        self.slotNames = slotNames
        let keys = slotNames.map { Array($0.utf8) }
        let types = route.query.map(\.type) + passthroughQuery.map { _ in ValueType.string }
        slotKeys = keys
        slotTypes = types
        let memory = FrozenMemory()
        self.memory = memory
        layout = Layout(index: index, segmentKinds: memory.copy(kinds), slotKeys: memory.copy(keys.map { memory.copy($0) }),
                        slotChecks: memory.copy(types.map { ValueCheck($0, in: memory) }),
                        slotLowercased: memory.copy(types.map(\.isUUID)),
                        requiredSlots: memory.copy(route.query.indices.filter { route.query[$0].required }))
    }
}
