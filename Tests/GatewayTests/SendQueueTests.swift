import APNsCore
import APNs
import Payloads
import Storage
import Synchronization
import Testing
@testable import Outbox

/// The dispatcher's send workers share one queue: every claimed device goes to exactly one
/// worker, a push reaches the waiting workers of every lane (not only the one it wakes),
/// and closing it ends them all.
@Suite(.timeLimit(.minutes(1))) struct SendQueueTests {
    static let campaign = CampaignSend(
        sender: ScriptedSender(),
        message: OutboxMessage(CampaignMessage(id: "c", dryRun: false, message: StoredMessage(pushType: "alert", topic: "t", priority: 10,
                                                                                        expiration: nil, collapseId: nil, channel: nil),
                                               body: [], apnsIDPrefix: "p-")))

    static func items(_ indexes: Range<Int>) -> [SendItem] {
        indexes.map { i in
            SendItem(claim: ClaimedDelivery(campaign: 1, index: i, token: "t\(i)", body: nil, attempt: 1, lease: 1),
                     request: APNsRequest(deviceToken: "t\(i)", path: "/3/device/t\(i)", pushType: .alert, topic: "com.example.app", priority: 10, body: []), campaign: campaign)
        }
    }

    /// What the workers saw, shared with them.
    final class Probe: Sendable {
        let taken = Mutex<[Int]>([])
        let release = Atomic<Bool>(false)
        let ended = Atomic<Int>(0)
    }

    @Test func everyItemGoesToOneWorkerWhileTheOthersHoldTheirsAndCloseEndsThemAll() async throws {
        let queue = SendQueue(lanes: 2)
        let probe = Probe()
        // A thread per lane, as the transport's task threads are: the workers never wait for
        // the shared pool, which other suites running beside this one may hold.
        let lanes = [SendExecutor(label: "test.lane.0"), SendExecutor(label: "test.lane.1")]
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask(executorPreference: lanes[worker % 2]) {
                    while let item = await queue.next(lane: worker % 2) {
                        probe.taken.withLock { $0.append(item.claim.index) }
                        // A send that does not come back until released: the items pushed
                        // meanwhile must reach the other waiting workers, whatever their lane.
                        while !probe.release.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(1)) }
                    }
                    probe.ended.add(1, ordering: .relaxed)
                }
            }
            try? await Task.sleep(for: .milliseconds(50))  // the workers wait (or are about to)
            queue.push(Self.items(0..<4))
            let deadline = ContinuousClock.now + .seconds(20)
            while probe.taken.withLock({ $0.count }) < 4 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
            #expect(probe.taken.withLock { $0.count } == 4, "four waiting workers took the four items while each held its own")
            #expect(queue.waiting == 0)
            probe.release.store(true, ordering: .relaxed)
            queue.push(Self.items(4..<25))
            while probe.taken.withLock({ $0.count }) < 25 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
            queue.close()
        }
        let all = probe.taken.withLock { $0 }
        #expect(all.sorted() == Array(0..<25), "each device taken exactly once: \(all)")
        #expect(probe.ended.load(ordering: .relaxed) == 6, "every worker ended at the close")
        // Closed: a worker that comes later gets nothing and does not wait.
        #expect(await queue.next(lane: 0) == nil)
    }
}
