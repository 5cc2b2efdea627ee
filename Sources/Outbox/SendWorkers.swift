import APNsCore
import APNs
import Payloads
import Storage
import Synchronization

/// What a claimed device's send shares with the other devices of its campaign in one claim:
/// the sender chosen for the campaign's app and environment, and the labels its metrics
/// and its result need. One reference per device instead of a copy of each.
final class CampaignSend: Sendable {
    let sender: any NotificationSender
    let app: String
    let pushType: String
    let route: CampaignRoute
    /// A broadcast's answer is known by the apns-request-id it sent (APNs echoes it).
    let isBroadcast: Bool

    init(sender: any NotificationSender, message: OutboxMessage) {
        self.sender = sender
        app = message.stored.app
        pushType = message.stored.message.pushType
        route = message.stored.route
        isBroadcast = message.stored.message.channel != nil
    }
}

/// One claimed device, ready to go.
struct SendItem: Sendable {
    let claim: ClaimedDelivery
    let request: APNsRequest
    let campaign: CampaignSend
}

/// The claimed devices waiting for a worker, and the workers waiting for a device. The
/// dispatcher's thread pushes a claim's devices; each worker takes the next one, sends it
/// and comes back. Workers are in `lanes`, one per thread they run on: a push resumes at
/// most one waiting worker per lane (at most one thread wakeup each), and a resumed worker
/// resumes the other waiting workers of its lane that have a device waiting, from its own
/// thread, where a resume only queues a job (no wakeup). Devices are taken in order.
/// Closed at the dispatcher's stop: workers then take what is left (and give it back, the
/// dispatcher stopping) and end.
final class SendQueue: Sendable {
    private struct State {
        var items: [SendItem] = []
        /// Where the next item to take is in `items` (taken ones are cleared in batches).
        var head = 0
        /// Per lane, its workers waiting for an item.
        var idle: [[UnsafeContinuation<SendItem?, Never>]]
        var closed = false

        mutating func take() -> SendItem? {
            guard head < items.count else { return nil }
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            }
            return item
        }

        /// Waiting workers of `lane` paired with waiting items, as many as both allow.
        mutating func wake(lane: Int, into wake: inout [(UnsafeContinuation<SendItem?, Never>, SendItem)], limit: Int = .max) {
            while wake.count < limit, !idle[lane].isEmpty, let item = take() {
                wake.append((idle[lane].removeLast(), item))
            }
        }
    }
    private let state: Mutex<State>
    let lanes: Int

    init(lanes: Int) {
        self.lanes = max(1, lanes)
        state = Mutex(State(idle: Array(repeating: [], count: max(1, lanes))))
    }

    /// Queues the items; wakes one waiting worker per lane.
    func push(_ items: [SendItem]) {
        var wake: [(UnsafeContinuation<SendItem?, Never>, SendItem)] = []
        state.withLock { state in
            state.items += items
            for lane in 0..<lanes {
                var one: [(UnsafeContinuation<SendItem?, Never>, SendItem)] = []
                state.wake(lane: lane, into: &one, limit: 1)
                wake += one
            }
        }
        for (worker, item) in wake { worker.resume(returning: item) }
    }

    /// The next item for a worker of `lane`; waits while there is none. Nil once closed and
    /// empty. Taking one, it resumes its lane's other waiting workers that items wait for.
    func next(lane: Int) async -> SendItem? {
        if let mine = state.withLock({ $0.take() }) {
            wakeOthers(lane: lane)
            return mine
        }
        let given = await withUnsafeContinuation { worker in
            let now: SendItem?? = state.withLock { state in
                if let item = state.take() { return .some(item) }
                if state.closed { return .some(nil) }
                state.idle[lane].append(worker)
                return nil
            }
            if let now { worker.resume(returning: now) }
        }
        // Resumed by a push (which wakes one worker a lane): the others of this lane next.
        if given != nil { wakeOthers(lane: lane) }
        return given
    }

    /// Resumes the waiting workers of `lane` that items wait for (called on that lane's
    /// thread: each resume queues a job there, no wakeup).
    private func wakeOthers(lane: Int) {
        var wake: [(UnsafeContinuation<SendItem?, Never>, SendItem)] = []
        state.withLock { state in state.wake(lane: lane, into: &wake) }
        for (worker, item) in wake { worker.resume(returning: item) }
    }

    /// No item comes any more: waiting workers end, the others end once the queue is empty.
    func close() {
        let idle = state.withLock { state in
            state.closed = true
            defer { for lane in state.idle.indices { state.idle[lane].removeAll() } }
            return state.idle.joined()
        }
        for worker in idle { worker.resume(returning: nil) }
    }

    /// Items not yet taken (for tests).
    var waiting: Int { state.withLock { $0.items.count - $0.head } }
}
