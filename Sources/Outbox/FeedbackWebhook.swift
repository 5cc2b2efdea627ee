import OSThreads
import Storage
import StrictJSON
import Synchronization
import Timing
import Crypto

/// Sends dead tokens and finished campaigns to the configured webhook in signed batches.
/// The batches come from the database's outboxes (`feedback_outbox`, `campaign_events`)
/// and leave them only after a 2xx, so a receiver that is down loses nothing: the worker
/// backs off (doubling, capped, each stream on its own) and tries again, also after a restart.
///
/// Request: `POST <url>`, `Content-Type: application/json`,
/// `X-Pushgate-Signature: sha256=<hex HMAC-SHA256 of the body with the secret>`,
/// `X-Pushgate-Event: dead_tokens` or `campaign.finished`,
/// `X-Pushgate-Batch: <first seq>-<last seq>` (per event type; the same on every retry of a
/// batch), body `{"dead_tokens":[{"token","timestamp_ms","reason","app"}…]}` or
/// `{"campaigns":[{"event":"campaign.finished","id","status",…}…]}`.
public final class FeedbackWebhook: Sendable {
    let settings: DurableSettings.Webhook
    let storage: any CampaignStorage
    let log: @Sendable (String) -> Void
    let clock: any TimeSource
    private let wakeup = Wakeup()
    private let loopEnded = Wakeup()
    private let ended = Completion()
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// Batches answered 2xx, and attempts that were not (for tests and logs).
    public let delivered = Atomic<Int>(0)
    public let failedAttempts = Atomic<Int>(0)

    public init(settings: DurableSettings.Webhook, storage: any CampaignStorage, clock: any TimeSource,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.clock = clock
        self.settings = settings
        self.storage = storage
        self.log = log
    }

    public func start() {
        started.store(true, ordering: .relaxed)
        let running = DetachedThread.start(name: "pg-webhook") { [self] in
            loop()
            loopEnded.signal()
            ended.finish()
        }
        if !running {
            log("pushgate: webhook: cannot start its thread; the outbox keeps the batches for the next start")
            loopEnded.signal()
            ended.finish()
        }
    }

    /// New dead tokens were recorded.
    public func wake() { wakeup.signal() }

    /// Asks the loop to end and waits for it, at most `deadlineSeconds` (a request in
    /// flight may take its whole timeout; what it carried is sent again at the next start).
    public func stop(deadlineSeconds: Double = 3600) {
        guard started.load(ordering: .relaxed) else { return }
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
        loopEnded.wait(for: .seconds(max(0, deadlineSeconds)))
    }

    /// The two event streams the webhook carries, each with its own batches and backoff.
    enum Stream: CaseIterable {
        case deadTokens, campaignFinished

        var eventName: String { self == .deadTokens ? "dead_tokens" : "campaign.finished" }
    }

    /// Retry timers run on the monotonic clock: setting the wall clock neither fires nor
    /// postpones a retry.
    private func loop() {
        var failures: [Stream: Int] = [:]
        var retryAt: [Stream: Double] = [:]
        while !stopping.load(ordering: .relaxed) {
            var sent = false
            var nextWake = clock.monotonicSeconds() + 1
            for stream in Stream.allCases {
                if let at = retryAt[stream], at > clock.monotonicSeconds() {
                    nextWake = min(nextWake, at)
                    continue
                }
                switch sendNext(stream) {
                case .none:
                    break
                case .sent:
                    failures[stream] = 0
                    retryAt[stream] = nil
                    sent = true
                case .failed(let batch, let why):
                    failures[stream, default: 0] += 1
                    failedAttempts.add(1, ordering: .relaxed)
                    let delay = settings.retryBackoff.delay(afterFailures: failures[stream] ?? 1, unit: 0).inSeconds
                    log("pushgate: webhook: \(stream.eventName) batch \(batch) not delivered (\(why)); retrying in \(delay) s")
                    retryAt[stream] = clock.monotonicSeconds() + delay
                    nextWake = min(nextWake, clock.monotonicSeconds() + delay)
                }
            }
            if sent { continue }
            // Woken early by new dead tokens; finished campaigns are looked for every second.
            wakeup.wait(for: .seconds(max(0.01, nextWake - clock.monotonicSeconds())))
        }
    }

    enum Attempt {
        case none
        case sent
        case failed(batch: String, why: WebhookFailure)
    }

    /// Sends the stream's open batch, if any, and acknowledges it after a 2xx.
    private func sendNext(_ stream: Stream) -> Attempt {
        do throws(StorageError) {
            switch stream {
            case .deadTokens:
                let items = try storage.pendingFeedback(limit: settings.batchSize)
                guard let first = items.first, let last = items.last else { return .none }
                return send(stream, batch: (first.seq, last.seq), body: Self.body(items)) { seq throws(StorageError) in
                    try storage.acknowledgeFeedback(through: seq)
                }
            case .campaignFinished:
                let events = try storage.pendingCampaignEvents(limit: settings.batchSize)
                guard let first = events.first, let last = events.last else { return .none }
                return send(stream, batch: (first.seq, last.seq), body: Self.body(events)) { seq throws(StorageError) in
                    try storage.acknowledgeCampaignEvents(through: seq)
                }
            }
        } catch {
            log("pushgate: webhook: cannot read the \(stream.eventName) outbox: \(error.description)")
            return .failed(batch: "-", why: WebhookFailure("storage: \(error.description)"))
        }
    }

    private func send(_ stream: Stream, batch seqs: (first: Int64, last: Int64), body: [UInt8],
                      acknowledge: (Int64) throws(StorageError) -> Void) -> Attempt {
        let batch = "\(seqs.first)-\(seqs.last)"
        if case .failure(let why) = deliver(body, batch: batch, event: stream.eventName) { return .failed(batch: batch, why: why) }
        delivered.add(1, ordering: .relaxed)
        do throws(StorageError) { try acknowledge(seqs.last) } catch {
            log("pushgate: webhook: delivered \(stream.eventName) batch \(batch) but cannot mark it: \(error.description)")
        }
        return .sent
    }

    func deliver(_ body: [UInt8], batch: String, event: String) -> Result<Void, WebhookFailure> {
        let signature = HMACSHA256.hex(key: Array(settings.secret.utf8), message: body)
        let headers = ["Content-Type: application/json", "X-Pushgate-Signature: sha256=" + signature, "X-Pushgate-Batch: " + batch,
                       "X-Pushgate-Event: " + event]
        switch WebhookPoster.post(url: settings.url, body: body, headers: headers, timeoutSeconds: settings.timeoutSeconds) {
        case .success(let status) where (200..<300).contains(status): return .success(())
        case .success(let status): return .failure(WebhookFailure("HTTP \(status)"))
        case .failure(let failure): return .failure(failure)
        }
    }

    static func body(_ items: [FeedbackItem]) -> [UInt8] {
        var w = JSONWriter(capacity: 32 + items.count * 120)
        w.object { w in
            w.member("dead_tokens", array: { w in
                for item in items {
                    w.object { w in
                        w.member("token", item.token)
                        w.member("timestamp_ms", item.timestampMilliseconds)
                        w.member("reason", item.reason)
                        w.member("app", item.app)
                    }
                }
            })
        }
        return w.bytes
    }

    /// `{"campaigns":[{"event":"campaign.finished","id",…,"status","counts","not_sent"}…]}`:
    /// a finished campaign never changes, so a retried batch has the same body.
    static func body(_ events: [CampaignEvent]) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + events.count * 400)
        w.object { w in
            w.member("campaigns", array: { w in
                for event in events {
                    w.object { w in
                        w.member("event", "campaign.finished")
                        let finishedAt = event.campaign.finishedAt ?? event.campaign.createdAt
                        CampaignJSON.writeSummaryMembers(event.campaign, now: finishedAt, to: &w)
                    }
                }
            })
        }
        return w.bytes
    }
}

extension FeedbackWebhook: Service {
    public var name: String { "webhook" }

    /// Starts the loop, posts until cancelled, then asks it to end and waits for it until
    /// the group's deadline (`StopDeadline.current`; none: at once). A request still in
    /// flight then is abandoned: its batch stays in the outbox and is sent at the next start.
    public func run() async throws {
        start()
        let group = StopDeadline.current
        await ended.wait()
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
        _ = await ended.wait(untilMonotonicSeconds: group?.monotonicSeconds ?? clock.monotonicSeconds(), clock: clock)
    }
}
