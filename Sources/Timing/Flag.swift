import Synchronization

/// A flag an escaping closure may raise (an `Atomic` itself cannot be captured).
public final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    public init() {}

    public func raise() { value.store(true, ordering: .relaxed) }
    public var isRaised: Bool { value.load(ordering: .relaxed) }
}
