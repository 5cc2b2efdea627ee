import Synchronization

/// What takes back the requests of one owner that have not gone out yet: a campaign
/// cancelled or paused, a signing key APNs refused. A request carries a `Ticket` taken
/// when it was admitted; once its owner is withdrawn after that, the transport does not
/// write it (nor send it again), at whatever point it waits: its queue, a stream or a
/// connection. Requests already written are answered as usual.
///
/// Ordered by one process-wide counter (`epoch`): a withdrawal takes the next value, a
/// ticket the current one, so a ticket taken before a withdrawal is covered by it and one
/// taken after is not, exactly. Checking a ticket is two atomic loads, no lock.
public final class Withdrawal: Sendable {
    private static let counter = Atomic<Int>(0)
    /// The counter's value at this owner's last withdrawal; 0: never.
    private let withdrawnAt = Atomic<Int>(0)
    private let why = Mutex<String>("")

    public init() {}

    /// Moves on at every withdrawal of any owner: a transport that saw it change looks for
    /// requests to give back.
    public static var epoch: Int { counter.load(ordering: .acquiring) }

    /// Every request with a ticket taken before now may no longer start.
    public func withdraw(because reason: String) {
        why.withLock { $0 = reason }
        let at = Self.counter.add(1, ordering: .acquiringAndReleasing).newValue
        // Two withdrawals of one owner may race: the later position stays.
        withdrawnAt.max(at, ordering: .releasing)
    }

    /// A ticket for a request admitted now.
    public func ticket() -> Ticket { Ticket(self, at: Self.epoch) }

    /// A ticket as of `epoch`, read earlier (`Withdrawal.epoch`): a withdrawal after that
    /// read covers it (the dispatcher reads it before it claims).
    public func ticket(asOf epoch: Int) -> Ticket { Ticket(self, at: epoch) }

    /// Why the last withdrawal happened ("" before the first).
    public var reason: String { why.withLock { $0 } }

    /// Whether a withdrawal came after `epoch` (a ticket's, kept without the reference).
    @inline(__always)
    public func isWithdrawn(since epoch: Int) -> Bool { withdrawnAt.load(ordering: .acquiring) > epoch }

    public struct Ticket: Sendable, Equatable {
        public let withdrawal: Withdrawal
        let at: Int

        init(_ withdrawal: Withdrawal, at: Int) {
            self.withdrawal = withdrawal
            self.at = at
        }

        /// Its owner was withdrawn after the ticket was taken.
        @inline(__always)
        public var isWithdrawn: Bool { withdrawal.isWithdrawn(since: at) }

        public static func == (a: Ticket, b: Ticket) -> Bool { a.withdrawal === b.withdrawal && a.at == b.at }
    }
}
