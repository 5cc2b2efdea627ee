import Storage
import StrictJSON
import Synchronization
import Timing

/// Campaigns a stored segment that does not decode has failed (the storage fails them at
/// the claim; `CampaignStorage.failedCampaigns`), for the operator: one error line in the
/// log per campaign, and the `segments` readiness check listing those of the last hour.
/// `refresh` reads the storage at most once per `pollSeconds`, whoever calls it how often
/// (the readiness monitor's thread, every round); `check` answers from the last read.
public final class SegmentFailureWatch: Sendable {
    /// How far back `/readyz` looks.
    public static let windowSeconds = 3600.0
    /// Campaigns named in the check; more are counted, up to `readLimit`.
    public static let listed = 10
    /// Campaigns read per refresh (newest first).
    static let readLimit = 100

    private struct State {
        var lastRead = -Double.infinity
        /// Of the last hour, newest first.
        var recent: [CampaignSummary] = []
        /// Campaigns already logged (those still within the window).
        var logged: Set<Int64> = []
    }

    private let storage: any CampaignStorage
    private let startedAt: Double
    private let pollSeconds: Double
    private let clock: @Sendable () -> Double
    private let log: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// `startedAt`: failures from before it were logged by the process that saw them (or
    /// by another instance), so only later ones are logged; `/readyz` lists the last hour's
    /// whatever the process. `log` takes the error line.
    public init(storage: any CampaignStorage, startedAt: Double, pollSeconds: Double = 1,
                clock: @escaping @Sendable () -> Double = { SystemClock().wallSeconds() },
                log: @escaping @Sendable (String) -> Void) {
        self.storage = storage
        self.startedAt = startedAt
        self.pollSeconds = pollSeconds
        self.clock = clock
        self.log = log
    }

    /// Reads the failed campaigns of the last hour if the last read is `pollSeconds` old,
    /// and logs each one that failed since the start and was not logged yet. A read that
    /// fails keeps the last list (the `storage` check reports the database).
    public func refresh() {
        let now = clock()
        let due = state.withLock { state in
            guard now - state.lastRead >= pollSeconds else { return false }
            state.lastRead = now
            return true
        }
        guard due, let recent = try? storage.failedCampaigns(since: now - Self.windowSeconds, limit: Self.readLimit) else { return }
        let fresh = state.withLock { state -> [CampaignSummary] in
            state.recent = recent
            // Newest first: a campaign that left the list never comes back into it.
            let current = Set(recent.map(\.seq))
            state.logged.formIntersection(current)
            let fresh = recent.filter { ($0.finishedAt ?? 0) >= startedAt && !state.logged.contains($0.seq) }
            state.logged.formUnion(fresh.map(\.seq))
            return fresh
        }
        for campaign in fresh.reversed() {
            log("pushgate: campaign \(TextSafety.escapedForDisplay(campaign.id)) failed: "
                + (campaign.failure.map(TextSafety.escapedForDisplay) ?? "a stored segment does not decode")
                + "; its unsent devices end failed (segmentCorrupt), other campaigns go on")
        }
    }

    /// The `segments` readiness check: nil when no campaign failed this way in the last
    /// hour, else which (newest first, each with why).
    public func check() -> String? {
        let recent = state.withLock { $0.recent }
        guard !recent.isEmpty else { return nil }
        let named = recent.prefix(Self.listed).map { campaign in
            TextSafety.escapedForDisplay(campaign.id) + (campaign.failure.map { " (\(TextSafety.escapedForDisplay($0)))" } ?? "")
        }
        // Only `readLimit` are read: beyond that the count is a lower bound.
        let atLeast = recent.count >= Self.readLimit ? "at least " : ""
        let more = recent.count > Self.listed ? "; and \(atLeast)\(recent.count - Self.listed) more" : ""
        let count = recent.count == 1 ? "1 campaign" : "\(atLeast)\(recent.count) campaigns"
        return "\(count) failed in the last hour: a stored segment does not decode: " + named.joined(separator: "; ") + more
    }
}
