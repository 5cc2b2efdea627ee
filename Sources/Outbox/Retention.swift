import OSThreads
import Storage
import Synchronization
import Timing

/// Purges finished campaigns older than `storage.retentionDays` — their device rows,
/// counts, idempotency keys and webhook events; dead-token records stay — and Live
/// Activity update tokens not registered again for `storage.liveActivityTokenRetentionHours`, and gives the
/// freed pages back (SQLite's incremental vacuum; on PostgreSQL autovacuum makes the space
/// reusable, and there is nothing to give back). Everything goes in small transactions with a
/// pause between them, so intake and the dispatcher never wait on it for more than one
/// batch. Runs on its own thread: once at start, then every `intervalSeconds`.
public final class Retention: Sendable {
    public struct Options: Sendable {
        public var retentionSeconds: Double
        public var intervalSeconds: Double
        /// Device rows deleted per transaction.
        public var batchRows: Int
        /// Pages given back per transaction.
        public var batchPages: Int
        /// Between two transactions: the write lock is free for everyone else.
        public var pauseSeconds: Double
        /// Live Activity update tokens last registered longer ago than this are removed.
        public var liveActivityTokenRetentionSeconds: Double

        public init(retentionSeconds: Double = 30 * 86_400, intervalSeconds: Double = 300, batchRows: Int = 1000,
                    batchPages: Int = 256, pauseSeconds: Double = 0.005,
                    liveActivityTokenRetentionSeconds: Double = DurableSettings.Storage.defaultLiveActivityTokenRetentionSeconds) {
            self.retentionSeconds = retentionSeconds
            self.liveActivityTokenRetentionSeconds = liveActivityTokenRetentionSeconds
            self.intervalSeconds = intervalSeconds
            self.batchRows = max(1, batchRows)
            self.batchPages = max(1, batchPages)
            self.pauseSeconds = pauseSeconds
        }
    }

    /// What one pass did.
    public struct Pass: Sendable, Equatable {
        public var campaigns = 0
        public var deliveries = 0
        /// Live Activity update tokens removed.
        public var liveActivityTokens = 0
        public var pagesReclaimed = 0
        public var transactions = 0

        /// The log line of a pass that purged something.
        public func summary(reclaimsFreePages: Bool) -> String {
            "pushgate: retention: purged \(campaigns) finished campaigns (\(deliveries) device rows)"
                + (liveActivityTokens > 0 ? " and \(liveActivityTokens) Live Activity update tokens" : "") + ", "
                + (reclaimsFreePages ? "\(pagesReclaimed) pages given back" : "their space reused by PostgreSQL's autovacuum")
        }
    }

    let storage: any CampaignStorage
    let options: Options
    let clock: any TimeSource
    let log: @Sendable (String) -> Void
    private let wakeup = Wakeup()
    private let loopEnded = Wakeup()
    private let ended = Completion()
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)

    public init(storage: any CampaignStorage, options: Options = Options(), clock: any TimeSource,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.storage = storage
        self.options = options
        self.clock = clock
        self.log = log
    }

    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let running = DetachedThread.start(name: "pg-retention") { [self] in
            while !stopping.load(ordering: .relaxed) {
                let pass = runOnce()
                if pass.campaigns > 0 || pass.liveActivityTokens > 0 { log(pass.summary(reclaimsFreePages: storage.reclaimsFreePages)) }
                wakeup.wait(for: .seconds(options.intervalSeconds))
            }
            loopEnded.signal()
            ended.finish()
        }
        if !running {
            log("pushgate: retention: cannot start its thread; nothing is pruned until the next start")
            loopEnded.signal()
            ended.finish()
        }
    }

    /// Ends the loop after the batch in hand, waiting at most `deadlineSeconds`.
    public func stop(deadlineSeconds: Double = 3600) {
        guard started.load(ordering: .relaxed), !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeup.signal()
        loopEnded.wait(for: .seconds(max(0, deadlineSeconds)))
    }

    /// One pass: purge everything due, then give the free pages back. Stops early (what is
    /// left waits for the next pass) when stopping or when storage fails.
    @discardableResult
    public func runOnce() -> Pass {
        var pass = Pass()
        let cutoff = clock.wallSeconds() - options.retentionSeconds
        do throws(StorageError) {
            while !stopping.load(ordering: .relaxed) {
                let progress = try storage.purgeFinished(before: cutoff, limit: options.batchRows)
                pass.transactions += 1
                pass.deliveries += progress.deliveries
                pass.campaigns += progress.campaigns
                guard progress.more else { break }
                pause()
            }
            let tokenCutoff = Int64(((clock.wallSeconds() - options.liveActivityTokenRetentionSeconds) * 1000).rounded(.down))
            while !stopping.load(ordering: .relaxed) {
                let removed = try storage.purgeLiveActivityTokens(registeredBeforeMilliseconds: tokenCutoff, limit: options.batchRows)
                pass.transactions += 1
                pass.liveActivityTokens += removed
                guard removed >= options.batchRows else { break }
                pause()
            }
            guard pass.deliveries > 0 || pass.campaigns > 0 || pass.liveActivityTokens > 0, storage.reclaimsFreePages else { return pass }
            while !stopping.load(ordering: .relaxed) {
                let given = try storage.reclaimFreePages(maxPages: options.batchPages)
                pass.transactions += 1
                pass.pagesReclaimed += given
                guard given >= options.batchPages else { break }
                pause()
            }
        } catch {
            log("pushgate: retention: stopped for now: \(error.description)")
        }
        return pass
    }

    private func pause() {
        if options.pauseSeconds > 0 { wakeup.wait(for: .seconds(options.pauseSeconds)) }
    }
}

extension Retention: Service {
    public var name: String { "retention" }

    /// Starts the loop, prunes until cancelled, then ends it after the batch in hand,
    /// waiting for it until the group's deadline (`StopDeadline.current`; none: at once).
    public func run() async throws {
        start()
        let group = StopDeadline.current
        await ended.wait()
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeup.signal()
        _ = await ended.wait(untilMonotonicSeconds: group?.monotonicSeconds ?? clock.monotonicSeconds(), clock: clock)
    }
}
