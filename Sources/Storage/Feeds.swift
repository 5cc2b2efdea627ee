/// A campaign's devices for intake, pulled one at a time through a closure. Intake takes
/// these concrete types rather than a generic sequence: across modules a generic sequence
/// is not specialised, and a chain of lazy sequences then costs a metadata lookup per
/// device and level. The closure is made where the caller's types are known (`TokenFeed`'s
/// `@inlinable` initialiser, `DeliveryFeed`'s caller), so its iteration is compiled for them.
public struct TokenFeed: Sequence, IteratorProtocol {
    @usableFromInline let pull: () -> String?

    @inlinable public init(_ tokens: some Sequence<String>) {
        var iterator = tokens.makeIterator()
        pull = { iterator.next() }
    }

    public mutating func next() -> String? { pull() }
}

/// See `TokenFeed`: the devices as intake stores them, made by the caller's closure.
public struct DeliveryFeed: Sequence, IteratorProtocol {
    private let pull: () -> NewDelivery?

    public init(pulling: @escaping () -> NewDelivery?) { pull = pulling }

    public mutating func next() -> NewDelivery? { pull() }
}
