import Timing

/// How one claim is shared out among the sendable campaigns, the same for every backend:
/// the transactional lane first with `Lane.bulkShare` kept for bulk while both have
/// devices due (what one lane cannot use the other takes), round-robin by campaign within
/// a lane (the campaign served longest ago first, each an equal part of what is left, at
/// least one device), each capped campaign no more than its rate bucket (`RateBucket`) allows.
/// The backend finds the due devices (`take`) and stores what `served` reports.
public struct FairClaim {
    /// One sendable campaign, in the backend's round-robin order.
    public struct Candidate: Sendable {
        public let seq: Int64
        public let lane: Lane
        public var ratePerSecond: Double? { bucket?.ratePerSecond }
        /// The campaign's rate bucket as stored (nil: no cap).
        let bucket: RateBucket?
        let now: Double
        /// What the bucket allows now (nil: no cap).
        var allowance: Int?
        public internal(set) var taken = 0
        /// Had fewer due devices than asked for: nothing more from it this claim.
        var exhausted = false

        /// `paidUntil`: the campaign's stored bucket (nil: never capped or never claimed).
        public init(seq: Int64, lane: Lane, ratePerSecond: Double?, paidUntil: Double?, now: Double) {
            self.seq = seq
            self.lane = lane
            self.now = now
            bucket = ratePerSecond.flatMap { $0 > 0 ? RateBucket(ratePerSecond: $0, paidUntil: paidUntil) : nil }
            allowance = bucket?.allowance(now: now)
        }

        /// The bucket after this claim: what to store as the campaign's `rate_paid_until`.
        public var paidUntil: Double? {
            guard var bucket else { return nil }
            bucket.pay(taken, now: now)
            return bucket.paidUntil
        }

        var canTakeMore: Bool { !exhausted && allowance.map { $0 > 0 } ?? true }
    }

    public private(set) var candidates: [Candidate]

    public init(_ candidates: [Candidate]) { self.candidates = candidates }

    /// Campaigns that got devices in this claim: they move to the back of their lane, and
    /// a capped one stores its new `paidUntil`.
    public var served: [Candidate] { candidates.filter { $0.taken > 0 } }

    public var seqs: [Int64] { candidates.map(\.seq) }

    /// Shares `limit` devices out; `take(seq, n)` claims up to `n` due devices of one
    /// campaign and returns how many it found.
    public mutating func share(limit: Int, take: (Int64, Int) throws(StorageError) -> Int) throws(StorageError) {
        guard limit > 0 else { return }
        let transactional = candidates.indices.filter { candidates[$0].lane == .transactional }
        let bulk = candidates.indices.filter { candidates[$0].lane == .bulk }
        let reserve = bulk.isEmpty || transactional.isEmpty ? 0 : max(1, Int((Double(limit) * Lane.bulkShare).rounded(.up)))
        var left = limit
        left -= try fill(transactional, budget: left - reserve, take: take)
        left -= try fill(bulk, budget: left, take: take)
        _ = try fill(transactional, budget: left, take: take)
    }

    /// Round-robin over one lane's campaigns: an equal part of what is left each turn.
    private mutating func fill(_ lane: [Int], budget: Int, take: (Int64, Int) throws(StorageError) -> Int) throws(StorageError) -> Int {
        var left = budget
        var open = lane.filter { candidates[$0].canTakeMore }
        while left > 0 && !open.isEmpty {
            let part = max(1, left / open.count)
            var still: [Int] = []
            for i in open where left > 0 {
                let want = min(part, left, candidates[i].allowance ?? Int.max)
                let got = try take(candidates[i].seq, want)
                left -= got
                candidates[i].taken += got
                if let allowance = candidates[i].allowance { candidates[i].allowance = allowance - got }
                if got < want { candidates[i].exhausted = true }
                if candidates[i].canTakeMore { still.append(i) }
            }
            open = still
        }
        return budget - left
    }
}
