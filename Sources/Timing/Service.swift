import Synchronization

/// A long-running part of the process: the dispatcher, the webhook, retention, the HTTP
/// server. `run()` works until its task is cancelled; then the part stops taking work,
/// finishes or gives back what it holds by the stop deadline of its group
/// (`StopDeadline.current`, on the monotonic clock), and returns — by that deadline even
/// when a thread of its own is still blocked (what that thread held is given back by the
/// storage's leases and sent again at the next start).
public protocol Service: Sendable {
    /// For log lines ("dispatcher", "webhook", …).
    var name: String { get }
    func run() async throws
}

/// When the process's stop must be over, in monotonic seconds (`TimeSource.monotonicSeconds`);
/// nil until a stop began. One per `ServiceGroup`, read by its services through
/// `StopDeadline.current`.
public final class StopDeadline: Sendable {
    private let value = Mutex<Double?>(nil)

    public init() {}

    /// The group's deadline for the services it runs (nil outside a group).
    @TaskLocal public static var current: StopDeadline?

    public var monotonicSeconds: Double? { value.withLock { $0 } }

    /// Sets the deadline once; a later call keeps the first.
    public func begin(atMonotonicSeconds seconds: Double) {
        value.withLock { if $0 == nil { $0 = seconds } }
    }
}

/// A one-time event that async code can wait for, with or without a deadline (a loop's
/// thread ended; a group's services all returned).
public final class Completion: Sendable {
    private struct State {
        var done = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())
    private let blocking = Wakeup()

    public init() {}

    public var isDone: Bool { state.withLock { $0.done } }

    /// Marks the event as happened and wakes every waiter (a second call does nothing).
    public func finish() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>]? in
            guard !s.done else { return nil }
            s.done = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        guard let waiters else { return }
        for waiter in waiters { waiter.resume() }
        blocking.signal()
    }

    /// Until the event happened, or the calling task is cancelled.
    public func wait() async {
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.done || s.cancelled.remove(id) != nil { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if let waiter = s.waiters.removeValue(forKey: id) { return waiter }
                s.cancelled.insert(id)
                return nil
            }
            waiter?.resume()
        }
    }

    /// Until the event happened or `deadline` (monotonic seconds of `clock`; nil: no
    /// deadline) passed, whether or not the calling task is cancelled — a stopping service
    /// waits for its loop this way. True when the event happened.
    public func wait(untilMonotonicSeconds deadline: Double?, clock: any TimeSource) async -> Bool {
        // A task of its own: the caller's cancellation (the stop itself) must not end the wait.
        await Task { [self] in
            guard let deadline else {
                await wait()
                return true
            }
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.wait(); return true }
                group.addTask {
                    try? await clock.sleep(for: .seconds(max(0, deadline - clock.monotonicSeconds())))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first || isDone
            }
        }.value
    }

    /// Blocks the calling thread until the event happened (for synchronous callers).
    public func waitBlocking() {
        guard !isDone else { return }
        blocking.wait()
        blocking.signal()  // for the next blocking waiter
    }
}

/// Runs long-running parts together, and stops them together: one deadline for the whole
/// stop, on the monotonic clock, from the moment `stop(within:)` is called; every service
/// is then cancelled and returns by that deadline (see `Service`).
public final class ServiceGroup: Sendable {
    private let services: [any Service]
    private let clock: any TimeSource
    private let log: @Sendable (String) -> Void
    private let deadline = StopDeadline()
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let ended = Completion()

    public init(_ services: [any Service], clock: any TimeSource, log: @escaping @Sendable (String) -> Void) {
        self.services = services
        self.clock = clock
        self.log = log
    }

    /// Starts every service's `run()` in one task group.
    public func start() {
        let running = Task { [services, deadline, log, ended] in
            await StopDeadline.$current.withValue(deadline) {
                await withTaskGroup(of: Void.self) { group in
                    for service in services {
                        group.addTask {
                            do { try await service.run() } catch { log("pushgate: \(service.name): \(error)") }
                        }
                    }
                }
            }
            ended.finish()
        }
        task.withLock { $0 = running }
    }

    /// The stop: the deadline is `budget` from now (monotonic), then every service is cancelled.
    public func stop(within budget: Duration) {
        deadline.begin(atMonotonicSeconds: clock.monotonicSeconds() + max(0, budget.inSeconds))
        task.withLock { $0 }?.cancel()
    }

    /// The stop's deadline in monotonic seconds (nil before `stop`).
    public var stopDeadline: Double? { deadline.monotonicSeconds }

    /// Blocks until every service returned.
    public func waitUntilStopped() { ended.waitBlocking() }

    public func stopped() async { await ended.wait() }
}
