import APNsCore
import Glibc
import APNs
import Dispatch
import Storage
import Synchronization
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox

/// Answers one request at a time, `spacing` apart, on a thread of its own: answers that
/// trickle in, as they do from APNs.
private final class TrickleSender: NotificationSender {
    let queue = DispatchQueue(label: "trickle")
    let spacingMicroseconds: UInt32

    init(spacingMicroseconds: UInt32) { self.spacingMicroseconds = spacingMicroseconds }

    func send(_ request: APNsRequest) async -> DeliveryResult { .delivered(apnsId: request.apnsID ?? "") }

    func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor, then done: @escaping @Sendable (DeliveryResult) -> Void) {
        queue.async { [spacingMicroseconds] in
            usleep(spacingMicroseconds)
            done(.delivered(apnsId: request.apnsID ?? ""))
        }
    }
}

/// The dispatcher's loop sleeps between turns: woken by answers only once the next claim is
/// due or none is left out, not once per answer (a thread switch per device cost more than
/// the device's request); and it says when everything it sent is recorded.
@Suite struct DispatcherWakeTests {
    private func storage(devices: Int, id: String) throws -> SQLiteCampaignStorage {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let campaign = NewCampaign(id: id, createdAt: 1, dryRun: false,
                                   message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        _ = try storage.insert(campaign, deliveries: (0..<devices).map { NewDelivery(token: Fixtures.token("e", $0)) },
                               now: SystemClock().wallSeconds())
        return storage
    }

    @Test func answersThatTrickleInDoNotWakeTheLoopOneByOne() throws {
        let devices = 300
        let storage = try storage(devices: devices, id: "trickle")
        let sender = TrickleSender(spacingMicroseconds: 2_000)
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: Metrics(),
                                    options: .init(inFlight: 100, claimBatch: 50), clock: SystemClock())
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 5) }
        #expect(eventuallyBlocking(timeout: .seconds(60)) { (try? storage.campaign(id: "trickle"))?.finishedAt != nil })
        #expect((try storage.campaign(id: "trickle"))?.counts[.delivered] == devices)
        // 300 answers over at least 0.6 s: woken per answer, the loop would turn about 300
        // times; woken per claim (every 50 answers) and every 25 ms, a few dozen.
        let passes = dispatcher.passes.load(ordering: .relaxed)
        #expect(passes < devices / 3, "the loop turned \(passes) times for \(devices) answers")
    }

    @Test func itSaysWhenEverythingSentIsRecordedAndTheCampaignHasFinishedByThen() throws {
        let devices = 120
        let storage = try storage(devices: devices, id: "settled")
        let sender = TrickleSender(spacingMicroseconds: 100)
        // Whether the campaign had finished at each call.
        let seen = Mutex<[Bool]>([])
        let dispatcher = Dispatcher(storage: storage, sender: sender, dryRunSender: sender, metrics: Metrics(),
                                    options: .init(inFlight: 40, claimBatch: 20), clock: SystemClock(),
                                    onSettled: { seen.withLock { $0.append((try? storage.campaign(id: "settled"))?.finishedAt != nil) } })
        try dispatcher.start()
        defer { _ = dispatcher.stop(deadlineSeconds: 5) }
        #expect(eventuallyBlocking(timeout: .seconds(60)) { seen.withLock { $0.last == true } })
        #expect((try storage.campaign(id: "settled"))?.counts[.delivered] == devices)
    }
}
