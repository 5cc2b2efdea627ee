import APNsCore
import APNs
import Glibc
import OSThreads
import Payloads
import Storage
import StrictJSON
import Synchronization
import Timing

/// Sends what the outbox holds. One loop, on its own thread (SQLite calls block, so they
/// stay off Swift's cooperative pool), claims due deliveries in batches, hands each to its
/// sender (answered through a callback, no task per device), and records results in
/// batched transactions. At most `inFlight`
/// deliveries are claimed and unrecorded at any moment: that is what a crash can cause
/// to be sent twice.
public final class Dispatcher: Sendable {
    public struct Options: Sendable {
        public var inFlight: Int
        public var claimBatch: Int
        public var maxAttempts: Int
        public var retryBaseSeconds: Double
        public var retryMaxSeconds: Double
        /// Who claims and for how long (renewed every third of it while sends are in flight).
        /// An empty owner: this process, stamped by the dispatcher's clock when it is made.
        public var lease: LeaseTerms

        /// Between attempts after a transient failure: doubling from `retryBaseSeconds`, at
        /// most `retryMaxSeconds`, the later half of each delay random.
        public var retryBackoff: Backoff {
            Backoff(initial: .seconds(retryBaseSeconds), maximum: .seconds(retryMaxSeconds), jitter: 0.5)
        }

        public init(inFlight: Int = 256, claimBatch: Int = 500, maxAttempts: Int = 5,
                    retryBaseSeconds: Double = 2, retryMaxSeconds: Double = 300,
                    lease: LeaseTerms = LeaseTerms(owner: "", seconds: 30)) {
            self.lease = lease
            self.inFlight = max(1, inFlight)
            self.claimBatch = max(1, claimBatch)
            self.maxAttempts = max(1, maxAttempts)
            self.retryBaseSeconds = retryBaseSeconds
            self.retryMaxSeconds = retryMaxSeconds
        }
    }

    public let storage: any CampaignStorage
    let sender: any NotificationSender
    let dryRunSender: any NotificationSender
    let metrics: any OutboxMetrics
    let options: Options
    let clock: any TimeSource
    /// When a route's sends may go again while they cannot (its signing key held, its
    /// connection pool unable to reach APNs); nil: it can send. A held route's campaigns
    /// are not claimed until then; every other route's go on.
    let heldUntil: @Sendable (CampaignRoute) -> Double?
    let log: @Sendable (String) -> Void
    /// Called after dead tokens were recorded (the webhook wakes up).
    let onDeadTokens: @Sendable () -> Void
    /// Run on the dispatcher's thread about once a minute (expired idempotency keys).
    let housekeeping: @Sendable () -> Void
    /// Called on the loop's thread after a turn recorded results and left nothing in flight:
    /// a campaign may have just finished (`send` looks at once instead of at its next poll).
    let onSettled: @Sendable () -> Void
    /// The sender for a campaign (its app's, in its environment); nil: `sender`, or
    /// `dryRunSender` for a dry-run campaign.
    let senders: (@Sendable (CampaignMessage) -> any NotificationSender)?

    private let completed = Mutex(Answers())
    private let wakeup = Wakeup()
    private let loopEnded = Wakeup()
    /// The loop's thread ended (for `run()`, which waits without blocking a thread).
    private let ended = Completion()
    private let outstanding = Atomic<Int>(0)
    /// The loop's turns so far, woken or timed out (for tests: it is not woken per answer).
    let passes = Atomic<Int>(0)
    /// When a stop gives up waiting for answers, on the monotonic clock (seconds).
    private let stopDeadline = Mutex<Double?>(nil)
    private let running = Atomic<Bool>(false)
    /// Set at the signal: no claim and no APNs request starts any more.
    private let stopping = Atomic<Bool>(false)
    /// Where a send that has to wait for its result runs (any APNs answer but a 200, a
    /// test's sender): a queue of the dispatcher's own, not the cooperative pool, so a
    /// caller blocking pool threads (a synchronous wait, a busy test run) cannot stall it.
    private let executor = SendExecutor(label: "pushgate.dispatcher.sends")
    /// Per campaign with claimed sends: withdrawn at a cancel or pause, which takes back its
    /// requests not yet written (`Withdrawal`), with how many of its sends are claimed and
    /// not finished. A campaign with none is dropped before the next claim, so the table
    /// holds the campaigns in flight, not every campaign ever sent.
    private let withdrawals = Mutex<[Int64: WithdrawalEntry]>([:])

    /// Answers not yet taken by the loop, and when the loop wants waking for them: not at
    /// every answer (a sleep and a wakeup per device cost more than the device's request),
    /// but when enough are in to claim again (or all are, the campaign's end).
    private struct Answers {
        var done: [Finished] = []
        /// Wake the loop once `done` holds this many.
        var wakeAt = 1
        /// The loop was woken for `done` and has not taken it yet.
        var woken = false

        mutating func take() -> [Finished] {
            defer { done.removeAll(keepingCapacity: true) }
            woken = false
            return done
        }

        /// Whether this is the moment to wake the loop (once per take).
        mutating func shouldWake() -> Bool {
            guard !woken, done.count >= wakeAt else { return false }
            woken = true
            return true
        }
    }

    private struct WithdrawalEntry {
        let withdrawal = Withdrawal()
        var outstanding = 0
    }

    public init(storage: any CampaignStorage, sender: any NotificationSender, dryRunSender: any NotificationSender,
                metrics: any OutboxMetrics, heldUntil: @escaping @Sendable (CampaignRoute) -> Double? = { _ in nil },
                options: Options = Options(), clock: any TimeSource,
                log: @escaping @Sendable (String) -> Void = { _ in }, onDeadTokens: @escaping @Sendable () -> Void = {},
                housekeeping: @escaping @Sendable () -> Void = {}, onSettled: @escaping @Sendable () -> Void = {},
                senders: (@Sendable (CampaignMessage) -> any NotificationSender)? = nil) {
        self.storage = storage
        self.sender = sender
        self.dryRunSender = dryRunSender
        self.metrics = metrics
        var options = options
        if options.lease.owner.isEmpty {
            options.lease = LeaseTerms(instance: InstanceID.current(now: clock.wallSeconds()), seconds: options.lease.seconds)
        }
        self.options = options
        self.clock = clock
        self.heldUntil = heldUntil
        self.log = log
        self.onDeadTokens = onDeadTokens
        self.housekeeping = housekeeping
        self.onSettled = onSettled
        self.senders = senders
    }

    /// Deliveries claimed and not yet recorded.
    public var inFlight: Int { outstanding.load(ordering: .relaxed) }

    /// Puts back what a previous process left in flight, then starts the loop.
    public func start() throws(StorageError) {
        let requeued = try storage.requeueInFlight()
        if requeued > 0 { log("pushgate: \(requeued) deliveries were in flight when the last process stopped; sending them again") }
        metrics.setQueueDepth((try? storage.queueDepth()) ?? 0)
        guard !running.exchange(true, ordering: .relaxed) else { return }
        let started = DetachedThread.start(name: "pg-dispatcher") { [self] in
            loop()
            loopEnded.signal()
            ended.finish()
        }
        if !started {
            log("pushgate: cannot start the dispatcher's thread; nothing is sent until the next start")
            loopEnded.signal()  // so that stop() does not wait for a loop that never ran
            ended.finish()
        }
    }

    /// A campaign was accepted: look for work now rather than at the next poll.
    public func wake() { wakeup.signal() }

    /// A campaign was cancelled or paused (already stored): its claimed sends not yet
    /// written to APNs are taken back, wherever they wait (a task not started, the
    /// transport's queue, a stream or a connection), and given back to the outbox untouched
    /// (pending, no attempt spent); a cancelled campaign's are then ended `cancelled` like
    /// its other unsent devices. Those already written are answered and recorded as usual.
    /// Covers claims made before this call, even if their sends start after it.
    public func withdraw(campaign seq: Int64, because reason: String) {
        // Made here when no send of the campaign is out yet: it covers a claim this turn makes.
        let withdrawal = withdrawals.withLock { table in
            if let known = table[seq] { return known.withdrawal }
            let made = WithdrawalEntry()
            table[seq] = made
            return made.withdrawal
        }
        withdrawal.withdraw(because: reason)
        wakeup.signal()
    }

    /// The first step of a stop, at once: no claim and no APNs request starts from now on
    /// (a claimed send not yet started is given back); sends in flight go on and are recorded.
    public func beginStop() {
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
    }

    /// Stops claiming (`beginStop`), waits for sends in flight up to the deadline and records
    /// their results, then gives back the leases of whatever is still unanswered: they expire
    /// now, so the next start or another instance takes them over. Returns true when nothing
    /// was left in flight.
    public func stop(deadlineSeconds: Double) -> Bool {
        guard requestStop(atMonotonicSeconds: clock.monotonicSeconds() + deadlineSeconds) else { return inFlight == 0 }
        loopEnded.wait()
        return giveBackUnanswered()
    }

    /// `beginStop`, and the loop ends once nothing is in flight or at `deadline`. False
    /// when the loop was not running.
    private func requestStop(atMonotonicSeconds deadline: Double) -> Bool {
        beginStop()
        guard running.exchange(false, ordering: .relaxed) else { return false }
        stopDeadline.withLock { $0 = deadline }
        wakeup.signal()
        return true
    }

    /// After the loop ended: the leases of sends still unanswered expire now. True when
    /// nothing was left in flight.
    private func giveBackUnanswered() -> Bool {
        if inFlight > 0 { _ = try? storage.renewLeases(LeaseTerms(owner: options.lease.owner, seconds: 0), now: clock.wallSeconds()) }
        return inFlight == 0
    }

    /// How long results may wait in memory for the next claim's transaction before they
    /// get one of their own. Results not yet recorded are part of the in-flight window
    /// (what a crash sends again), so waiting costs no safety; it saves a commit (an fsync,
    /// a rewrite of the segment's codes) per handful of answers.
    static let recordInterval = 0.025
    /// How often the queue depth gauge is read and stopped campaigns are looked for.
    static let upkeepInterval = 0.1

    private func loop() {
        var messages: [Int64: OutboxMessage] = [:]
        var unrecorded: [DeliveryUpdate] = []
        // Intervals and the stop deadline on the monotonic clock; storage's `now` (due
        // times, lease expiries, stamps it keeps) on the wall clock.
        var lastHousekeeping = clock.monotonicSeconds()
        var lastRenewal = clock.monotonicSeconds()
        var lastUpkeep = -Double.infinity
        // When the oldest result in `unrecorded` arrived.
        var oldestUnrecorded: Double?
        // The last claim took fewer than it asked for: nothing more is due now.
        var drained = false
        while true {
            passes.add(1, ordering: .relaxed)
            let deadline = stopDeadline.withLock { $0 }
            let collected = completed.withLock { $0.take() }
            if !collected.isEmpty, oldestUnrecorded == nil { oldestUnrecorded = clock.monotonicSeconds() }
            countMetrics(collected)
            for finished in collected { unrecorded.append(finished.update) }
            // Claimed and not recorded once this turn's results are in: the window left.
            let stillOut = inFlight - unrecorded.count
            var limit = 0
            let stopping = stopping.load(ordering: .relaxed)
            if deadline == nil && !stopping {
                let free = options.inFlight - stillOut
                // Claim in sizeable batches (`claimAtFree`), not one slot at a time, unless idle.
                if free > 0 && (free >= claimAtFree || stillOut == 0) { limit = min(options.claimBatch, free) }
            }
            let upkeep = clock.monotonicSeconds() - lastUpkeep >= Self.upkeepInterval
            if upkeep {
                lastUpkeep = clock.monotonicSeconds()
                // Cancelled and expired campaigns: their unsent devices are ended, a batch a turn.
                if deadline == nil, !stopping, let ended = try? storage.closeStopped(now: clock.wallSeconds(), limit: options.claimBatch), ended > 0 {
                    lastUpkeep = -Double.infinity  // look again at once: more may be left
                    wakeup.signal()
                }
            }
            var claims: [ClaimedDelivery] = []
            // Read before the claim: a cancel or pause after this covers what it claims.
            // Every claim so far went through `send`, so a campaign with no send out has no
            // claim a withdrawal must still cover.
            let answered = Self.runs(collected.lazy.map(\.update.campaign))
            withdrawals.withLock { table in
                for run in answered { table[run.campaign]?.outstanding -= run.count }
                if table.contains(where: { $0.value.outstanding <= 0 }) { table = table.filter { $0.value.outstanding > 0 } }
            }
            let claimEpoch = Withdrawal.epoch
            // Whether this turn's claim left a held route's campaigns alone.
            let skippedHeld = Flag()
            // Results go with the next claim; on their own only once they waited long enough,
            // when nothing is left out (the campaign's end), or when stopping.
            let recordNow = !unrecorded.isEmpty && (deadline != nil || stopping || stillOut == 0
                || clock.monotonicSeconds() - (oldestUnrecorded ?? 0) >= Self.recordInterval)
            if recordNow || limit > 0 {
                let now = clock.wallSeconds()
                let holds = ClaimHolds { [heldUntil] route in
                    guard let until = heldUntil(route), until > now else { return false }
                    skippedHeld.raise()
                    return true
                }
                do throws(StorageError) {
                    // Results and the next claim share one transaction: one commit per turn.
                    claims = try storage.recordAndClaim(unrecorded, claimLimit: limit, lease: options.lease, now: now, holds: holds)
                } catch {
                    log("pushgate: cannot record results or claim deliveries (results kept in memory, retrying): \(error.description)")
                    // Stopping: give up at the deadline; the rows stay in flight and are sent again at the next start.
                    if let deadline, clock.monotonicSeconds() >= deadline { break }
                    usleep(500_000)
                    continue
                }
                let recorded = !unrecorded.isEmpty
                outstanding.subtract(unrecorded.count, ordering: .relaxed)
                if unrecorded.contains(where: { $0.state == .unregistered }) { onDeadTokens() }
                unrecorded.removeAll(keepingCapacity: true)
                oldestUnrecorded = nil
                // A claim that came back after its lease ran out (this process was frozen, or
                // the database answered that late) may already be another instance's: it is
                // not sent from. The devices stay leased until the expiry, then any claim takes them over.
                if !claims.isEmpty, clock.wallSeconds() >= now + options.lease.seconds {
                    log("pushgate: a claim of \(claims.count) deliveries came back after its \(options.lease.seconds) s lease ran out; not sending from it")
                    metrics.recordLateClaim(claims.count)
                    claims = []
                }
                if limit > 0 { drained = claims.count < limit }
                outstanding.add(claims.count, ordering: .relaxed)
                if recorded && inFlight == 0 { onSettled() }
                send(claims, messages: &messages, epoch: claimEpoch)
            }
            if let deadline, inFlight == 0 || clock.monotonicSeconds() >= deadline { break }
            if upkeep, let depth = try? storage.queueDepth() { metrics.setQueueDepth(depth) }
            // Renewed well before expiry, so a live process never loses a lease it is using.
            if inFlight > 0, clock.monotonicSeconds() - lastRenewal >= options.lease.seconds / 3 {
                _ = try? storage.renewLeases(options.lease, now: clock.wallSeconds())
                lastRenewal = clock.monotonicSeconds()
            }
            if clock.monotonicSeconds() - lastHousekeeping > 60 {
                housekeeping()
                lastHousekeeping = clock.monotonicSeconds()
            }
            if claims.isEmpty {
                // Results waiting to be recorded are recorded once they are old enough.
                let recordDue = unrecorded.isEmpty ? nil : (oldestUnrecorded ?? 0) + Self.recordInterval
                // Woken by answers once the next claim is due (half the window free), or
                // when the last claim found no more to take, once none is left out; in
                // between, the wait ends by `recordInterval` at most.
                let notOut = drained ? 0 : options.inFlight - claimAtFree
                let wakeAt = deadline == nil && !stopping ? max(1, inFlight - unrecorded.count - notOut) : 1
                let woken = completed.withLock { answers in
                    answers.wakeAt = wakeAt
                    return answers.shouldWake()
                }
                if woken { wakeup.signal() }
                wait(skippedHeld: skippedHeld.isRaised, recordDue: recordDue)
            }
        }
    }

    /// Sleeps until a result arrives, a campaign is accepted, or the next retry is due.
    /// When the claim skipped a held route, the due time may be that route's (it stays due
    /// while held): it is looked at again at most 4 times a second, not in a tight loop.
    private func wait(skippedHeld: Bool, recordDue: Double?) {
        var timeout = 1.0
        if inFlight == 0, let due = try? storage.nextDueTime(now: clock.wallSeconds()) {
            timeout = min(1.0, max(skippedHeld ? 0.25 : 0.005, due - clock.wallSeconds()))
        }
        if let recordDue { timeout = min(timeout, max(0.001, recordDue - clock.monotonicSeconds())) }
        // Answers do not wake the loop one by one: those that came in are taken by then.
        if inFlight > 0 { timeout = min(timeout, Self.recordInterval) }
        if wakeup.wait(for: .seconds(timeout)) && inFlight > 0 {
            // Woken by answers: 1 ms more lets more in, so one claim and its commit take
            // more (without it `send` ran 11% slower at 15% more CPU, alternating rounds).
            usleep(1000)
        }
    }

    /// How much of the window must be free before the next claim: half (every claim is a
    /// commit, a rewrite of its segments and, on SQLite, WAL pages; the half still out keeps
    /// the streams busy meanwhile).
    private var claimAtFree: Int { max(1, options.inFlight / 2) }

    /// Hands a claim's devices to their senders: requests built here, withdrawal tickets
    /// as of the claim's epoch.
    private func send(_ claims: [ClaimedDelivery], messages: inout [Int64: OutboxMessage], epoch: Int) {
        guard !claims.isEmpty else { return }
        if messages.count > 1000 { messages.removeAll() }
        // Claims come campaign by campaign: the campaign is looked up once per run of it.
        let runs = Self.runs(claims.lazy.map(\.campaign))
        let tickets = withdrawals.withLock { table in
            runs.map { run -> Withdrawal.Ticket in
                table[run.campaign, default: WithdrawalEntry()].outstanding += run.count
                return table[run.campaign]!.withdrawal.ticket(asOf: epoch)
            }
        }
        var campaigns: [Int64: CampaignSend] = [:]
        var start = 0
        for (run, ticket) in zip(runs, tickets) {
            let devices = claims[start..<start + run.count]
            start += run.count
            if messages[run.campaign] == nil, let stored = try? storage.message(campaign: run.campaign) {
                messages[run.campaign] = OutboxMessage(stored)
            }
            guard let message = messages[run.campaign] else {
                for claim in devices {
                    finish(DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .failed, reason: DiagnosticCode.campaignMissing.rawValue,
                                          lease: claim.lease))
                }
                continue
            }
            // The campaign's app and environment choose the credentials and the connection pool.
            let campaign = campaigns[run.campaign]
                ?? CampaignSend(sender: senders?(message.stored) ?? (message.dryRun ? dryRunSender : sender), message: message)
            campaigns[run.campaign] = campaign
            for claim in devices {
                guard var request = message.request(for: claim) else {
                    finish(DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .failed,
                                          reason: DiagnosticCode.unknownStoredPushType.rawValue, lease: claim.lease))
                    continue
                }
                request.withdrawal = ticket
                deliver(SendItem(claim: claim, request: request, campaign: campaign))
            }
        }
    }

    /// Consecutive equal campaigns, counted: what a claim or a turn's results come in.
    static func runs(_ campaigns: some Sequence<Int64>) -> [(campaign: Int64, count: Int)] {
        var runs: [(campaign: Int64, count: Int)] = []
        for campaign in campaigns {
            if runs.last?.campaign == campaign { runs[runs.count - 1].count += 1 } else { runs.append((campaign, 1)) }
        }
        return runs
    }

    /// One device: handed to its sender unless the stop, cancel or pause came first. Not a
    /// task per device: the sender answers through a callback (for APNs, a 200 on the
    /// transport's thread), which hands the outcome to the loop.
    private func deliver(_ item: SendItem) {
        guard !stopping.load(ordering: .relaxed), item.request.withdrawal?.isWithdrawn != true else {
            finish(Self.givenBack(item.claim))  // claimed, not yet sent when the stop, cancel or pause began
            return
        }
        let started = clock.monotonicSeconds()
        item.campaign.sender.send(item.request, awaitingOn: executor) { [self] result in settle(item, result, started: started) }
    }

    /// A device's answer: its outcome, handed to the loop (which counts it).
    private func settle(_ item: SendItem, _ result: DeliveryResult, started: Double) {
        let claim = item.claim
        if case .transportFailed(let failure) = result, failure.code == .notStarted {
            finish(Self.givenBack(claim))  // queued in the transport when the stop, cancel or pause began
            return
        }
        let campaign = item.campaign
        let seconds: Double? = if case .dryRun = result { nil } else { clock.monotonicSeconds() - started }
        let requestID = campaign.isBroadcast ? item.request.apnsID : nil
        finish(outcome(of: result, for: claim, route: campaign.route, requestID: requestID), sent: campaign, seconds: seconds)
    }

    /// A device's end as the loop collects it: its update and, for a device that was sent,
    /// what the metrics count (`seconds`: its request's, unless a dry run).
    private struct Finished {
        let update: DeliveryUpdate
        let sent: CampaignSend?
        let seconds: Double?
    }

    /// The metrics of the devices that ended since the last turn, counted on the loop's
    /// thread rather than the transport's, and once per campaign, result and reason rather
    /// than per device (each count takes the metrics' lock and builds its label key).
    private func countMetrics(_ finished: [Finished]) {
        // A turn's devices mostly share one campaign and one result: a short list, looked
        // through from its end, beats hashing each device's labels.
        var outcomes: [(campaign: CampaignSend, state: DeliveryState, reason: String?, count: Int)] = []
        var latencies: [(campaign: CampaignSend, seconds: [Double])] = []
        for device in finished {
            guard let campaign = device.sent else { continue }
            let update = device.update
            if let i = outcomes.lastIndex(where: { $0.campaign === campaign && $0.state == update.state && $0.reason == update.reason }) {
                outcomes[i].count += 1
            } else {
                outcomes.append((campaign, update.state, update.reason, 1))
            }
            guard let seconds = device.seconds else { continue }
            if let i = latencies.lastIndex(where: { $0.campaign === campaign }) {
                latencies[i].seconds.append(seconds)
            } else {
                latencies.append((campaign, [seconds]))
            }
        }
        for outcome in outcomes {
            metrics.recordNotifications(app: outcome.campaign.app, pushType: outcome.campaign.pushType,
                                        result: outcome.state == .retrying ? "retrying" : outcome.state.name,
                                        reason: outcome.reason ?? "", count: outcome.count)
        }
        for latency in latencies {
            metrics.recordAPNsLatencies(app: latency.campaign.app, pushType: latency.campaign.pushType, seconds: latency.seconds)
        }
    }

    /// A claimed device that was never sent because the process is stopping: back to
    /// pending, no attempt spent.
    static func givenBack(_ claim: ClaimedDelivery) -> DeliveryUpdate {
        var back = DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .pending, lease: claim.lease)
        back.refundAttempt = true
        return back
    }

    private func finish(_ update: DeliveryUpdate, sent: CampaignSend? = nil, seconds: Double? = nil) {
        let wake = completed.withLock { answers in
            answers.done.append(Finished(update: update, sent: sent, seconds: seconds))
            return answers.shouldWake()
        }
        if wake { wakeup.signal() }
    }

    /// What to store for one send. Transient failures — APNs 429 TooManyRequests, 500 and
    /// 503 after the client's own quick retries, or no answer at all — come back later, up
    /// to `maxAttempts`, never before APNs' `Retry-After`. A held key (`keyStopped`) and an unreachable APNs are not the
    /// device's problem: it waits and costs the device nothing.
    /// `requestID`: a broadcast's `apns-request-id`, recorded as its id.
    func outcome(of result: DeliveryResult, for claim: ClaimedDelivery, route: CampaignRoute, requestID: String? = nil) -> DeliveryUpdate {
        var update = DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .failed, lease: claim.lease)
        switch result {
        case .delivered(let id, let uniqueId):
            update.state = .delivered
            update.status = 200
            update.apnsID = requestID ?? id
            update.apnsUniqueID = uniqueId
        case .unregistered(let reason, let timestamp):
            update.state = .unregistered
            update.status = 410
            update.reason = reason.rawValue
            update.timestampMilliseconds = timestamp
        case .dryRun(let prepared):
            update.state = .dryRun
            update.apnsID = prepared.apnsID
        case .failed(let status, let reason, let retryAfter):
            update.status = status
            update.reason = reason.rawValue
            if RetryPolicy().isRetryable(status: status, reason: reason) {
                retryLater(&update, attempt: claim.attempt, always: false, notBefore: retryAfter.map(Double.init))
            }
        case .transportFailed(let failure) where failure.code == .unreachable || failure.code == .keyStopped:
            // APNs cannot be reached, or refused the signing key: not the device's fault.
            // The route's claims pause until its transport's probe finds APNs again, or its
            // key's pause ends or its probe is due (`heldUntil`); no attempt spent.
            update.reason = failure.code.rawValue
            update.state = .retrying
            update.refundAttempt = true
            let now = clock.wallSeconds()
            update.nextAttemptAt = failure.code == .keyStopped ? max(now + 1, heldUntil(route) ?? 0) : now + 1
        case .transportFailed(let failure):
            update.reason = failure.code.rawValue
            // Cancelled means we were stopping: not the device's fault, so no attempt is spent.
            retryLater(&update, attempt: claim.attempt, always: failure.code == .cancelled)
        }
        return update
    }

    /// `notBefore`: APNs' `Retry-After` in seconds, a floor under the backoff.
    private func retryLater(_ update: inout DeliveryUpdate, attempt: Int, always: Bool, notBefore: Double? = nil) {
        guard always || attempt < options.maxAttempts else { return }
        update.state = .retrying
        let backoff = always ? .zero : options.retryBackoff.delay(afterFailures: attempt, unit: Backoff.randomUnit())
        update.nextAttemptAt = clock.wallSeconds() + max(backoff.inSeconds, notBefore ?? 0)
    }
}

extension Dispatcher: Service {
    public var name: String { "dispatcher" }

    /// The dispatcher as a service: starts the loop (unless `start` already did), sends
    /// until cancelled, then stops as `stop` does with the group's deadline
    /// (`StopDeadline.current`; none: at once): sends in flight are waited for until then,
    /// their results recorded, the leases of those still unanswered given back.
    public func run() async throws {
        if !running.load(ordering: .relaxed) { try start() }
        let group = StopDeadline.current
        await ended.wait()  // returns at cancellation (or when the thread could not start)
        let deadline = group?.monotonicSeconds ?? clock.monotonicSeconds()
        guard requestStop(atMonotonicSeconds: deadline) else { return }
        // The loop ends by the deadline by itself (it checks it every turn).
        _ = await ended.wait(untilMonotonicSeconds: nil, clock: clock)
        _ = giveBackUnanswered()
    }
}
