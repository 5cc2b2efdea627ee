/// A cap of `ratePerSecond` sends, as a bucket refilled continuously that holds at most
/// one second of sends (and at least one): after a pause, one second's worth may go at
/// once, then one every `1 / ratePerSecond`. Kept as the moment sends are paid for up to
/// (`paidUntil`), so it can be stored (a campaign's `rate_paid_until`) and shared by every
/// process that sends for the campaign. One rule for the outbox's claims and `pushgate send`.
public struct RateBucket: Sendable, Equatable {
    public let ratePerSecond: Double
    /// Sends are paid for up to this moment (seconds); nil: nothing sent yet.
    public private(set) var paidUntil: Double?

    /// `ratePerSecond` must be more than 0.
    public init(ratePerSecond: Double, paidUntil: Double? = nil) {
        precondition(ratePerSecond > 0, "a rate cap is more than 0 per second")
        self.ratePerSecond = ratePerSecond
        self.paidUntil = paidUntil
    }

    /// Where the bucket starts at `now`: what is paid for, but never more than one second
    /// (or one send) back, so a long pause does not save up a burst.
    public func paidFrom(now: Double) -> Double {
        max(paidUntil ?? -Double.infinity, now - max(1, ratePerSecond) / ratePerSecond)
    }

    /// How many sends the bucket allows at `now`.
    public func allowance(now: Double) -> Int {
        Int(((now - paidFrom(now: now)) * ratePerSecond + 1e-9).rounded(.down))
    }

    /// The earliest moment the next send is allowed (at or before `now`: at once).
    public func nextSendAt(now: Double) -> Double {
        paidFrom(now: now) + 1 / ratePerSecond
    }

    /// Pays for `sends` made at `now` (the bucket may go into debt: the caller checks
    /// `allowance` first).
    public mutating func pay(_ sends: Int, now: Double) {
        paidUntil = paidFrom(now: now) + Double(sends) / ratePerSecond
    }
}
