import Synchronization
import Timing

/// A clock tests move by hand: wall and monotonic time advance together, only when
/// `advance` is called, and a `sleep` ends when the clock has been moved past its end.
public final class ManualClock: TimeSource {
    private struct Sleeper {
        let id: UInt64
        let wakeAt: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var wallSeconds: Double
        var monotonic: UInt64 = 1_000_000_000
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelled: Set<UInt64> = []
    }

    private let state: Mutex<State>

    /// Starts at `wallSeconds` since 1970 (a fixed moment in 2023 unless told otherwise).
    public init(wallSeconds: Double = 1_700_000_000) {
        state = Mutex(State(wallSeconds: wallSeconds))
    }

    public func wallSeconds() -> Double { state.withLock { $0.wallSeconds } }

    public func monotonicNanoseconds() -> UInt64 { state.withLock { $0.monotonic } }

    /// Moves both clocks forward and wakes every sleeper whose time has come.
    public func advance(by duration: Duration) {
        let nanoseconds = UInt64(max(0, duration.inSeconds * 1e9).rounded())
        let due = state.withLock { s -> [Sleeper] in
            s.wallSeconds += duration.inSeconds
            s.monotonic += nanoseconds
            let now = s.monotonic
            let due = s.sleepers.filter { $0.wakeAt <= now }
            s.sleepers.removeAll { $0.wakeAt <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    public func advance(seconds: Double) { advance(by: .seconds(seconds)) }

    /// How many callers are suspended in `sleep` (tests wait for this before advancing).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(for duration: Duration) async throws {
        let nanoseconds = UInt64(max(0, duration.inSeconds * 1e9).rounded())
        let id = state.withLock { s -> UInt64 in s.nextID += 1; return s.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { s in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if nanoseconds == 0 { return .success(()) }
                    s.sleepers.append(Sleeper(id: id, wakeAt: s.monotonic + nanoseconds, continuation: continuation))
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else {
                    s.cancelled.insert(id)  // not suspended yet: refuse when it gets there
                    return nil
                }
                return s.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
