import Dispatch
import Foundation
import Storage
import StrictJSON
import Synchronization
import Timing

/// Sends dead tokens to the configured webhook in signed batches. The batches come from
/// the database's feedback outbox and leave it only after a 2xx, so a receiver that is
/// down loses nothing: the worker backs off (doubling, capped) and tries again, also
/// after a restart.
///
/// Request: `POST <url>`, `Content-Type: application/json`,
/// `X-Pushgate-Signature: sha256=<hex HMAC-SHA256 of the body with the secret>`,
/// `X-Pushgate-Batch: <first seq>-<last seq>` (the same on every retry of a batch), body
/// `{"dead_tokens":[{"token","timestamp_ms","reason"}…]}`.
public final class FeedbackWebhook: Sendable {
    let settings: DurableSettings.Webhook
    let storage: any CampaignStorage
    let log: @Sendable (String) -> Void
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopSignal = DispatchSemaphore(value: 0)
    private let loopEnded = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// Batches answered 2xx, and attempts that were not (for tests and logs).
    public let delivered = Atomic<Int>(0)
    public let failedAttempts = Atomic<Int>(0)

    public init(settings: DurableSettings.Webhook, storage: any CampaignStorage, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.storage = storage
        self.log = log
    }

    public func start() {
        started.store(true, ordering: .relaxed)
        let thread = Thread { [self] in
            loop()
            loopEnded.signal()
        }
        thread.name = "pushgate.webhook"
        thread.start()
    }

    /// New dead tokens were recorded.
    public func wake() { wakeup.signal() }

    public func stop() {
        guard started.load(ordering: .relaxed) else { return }
        stopping.store(true, ordering: .relaxed)
        stopSignal.signal()
        wakeup.signal()
        loopEnded.wait()
    }

    private func loop() {
        var failures = 0
        while !stopping.load(ordering: .relaxed) {
            let items: [FeedbackItem]
            do throws(StorageError) {
                items = try storage.pendingFeedback(limit: settings.batchSize)
            } catch {
                log("pushgate: webhook: cannot read the feedback outbox: \(error.description)")
                _ = stopSignal.wait(timeout: .now() + 1)
                continue
            }
            guard let first = items.first, let last = items.last else {
                _ = wakeup.wait(timeout: .now() + 5)
                continue
            }
            switch deliver(items, batch: "\(first.seq)-\(last.seq)") {
            case .success:
                failures = 0
                delivered.add(1, ordering: .relaxed)
                do throws(StorageError) { try storage.acknowledgeFeedback(through: last.seq) } catch {
                    log("pushgate: webhook: delivered batch \(first.seq)-\(last.seq) but cannot mark it: \(error.description)")
                }
            case .failure(let why):
                failures += 1
                failedAttempts.add(1, ordering: .relaxed)
                let delay = settings.retryBackoff.delay(afterFailures: failures, unit: 0).inSeconds
                log("pushgate: webhook: batch \(first.seq)-\(last.seq) not delivered (\(why)); retrying in \(delay) s")
                _ = stopSignal.wait(timeout: .now() + delay)
            }
        }
    }

    func deliver(_ items: [FeedbackItem], batch: String) -> Result<Void, WebhookFailure> {
        let body = Self.body(items)
        let signature = HMACSHA256.hex(key: Array(settings.secret.utf8), message: body)
        let headers = ["Content-Type: application/json", "X-Pushgate-Signature: sha256=" + signature, "X-Pushgate-Batch: " + batch]
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
                    }
                }
            })
        }
        return w.bytes
    }
}
