import Synchronization
import Testing
import TestSupport
import Timing

/// A service that, once cancelled, waits for `loop` (a stand-in for its thread) until the
/// group's deadline, and records the deadline it was given.
private final class LoopService: Service {
    let name: String
    let loop = Completion()
    let seenDeadline = Mutex<Double?>(nil)
    let returned = Completion()
    let clock: any TimeSource

    init(_ name: String, clock: any TimeSource) {
        self.name = name
        self.clock = clock
    }

    func run() async throws {
        let group = StopDeadline.current
        await Completion().wait()  // until cancelled
        let deadline = group?.monotonicSeconds
        seenDeadline.withLock { $0 = deadline }
        _ = await loop.wait(untilMonotonicSeconds: deadline, clock: clock)
        returned.finish()
    }
}

/// No time limit: in a parallel run, tests blocked on child processes can hold the whole
/// cooperative pool for minutes, and these wait for it rather than fail.
@Suite struct ServiceGroupTests {
    @Test func aStopGivesEveryServiceOneDeadlineAndEndsWhenTheyAreDone() async {
        let clock = ManualClock()
        let a = LoopService("a", clock: clock), b = LoopService("b", clock: clock)
        let group = ServiceGroup([a, b], clock: clock, log: { _ in })
        group.start()
        let stopAt = clock.monotonicSeconds()
        group.stop(within: .seconds(30))
        #expect(group.stopDeadline == stopAt + 30)
        a.loop.finish()
        b.loop.finish()
        // Both loops ended: the group is over without the clock moving at all.
        await group.stopped()
        #expect(a.seenDeadline.withLock { $0 } == stopAt + 30)
        #expect(b.seenDeadline.withLock { $0 } == stopAt + 30)
    }

    @Test func aServiceStillBusyAtTheDeadlineIsLeftThenAndTheGroupEnds() async {
        let clock = ManualClock()
        let quick = LoopService("quick", clock: clock), stuck = LoopService("stuck", clock: clock)
        let group = ServiceGroup([quick, stuck], clock: clock, log: { _ in })
        group.start()
        group.stop(within: .seconds(30))
        quick.loop.finish()
        await quick.returned.wait()
        // The stuck one waits on the clock for its deadline; nothing else ends it.
        #expect(await eventually { clock.sleeperCount >= 1 })
        clock.advance(by: .seconds(29))
        #expect(!stuck.returned.isDone, "returned before its deadline")
        clock.advance(by: .seconds(1))
        await group.stopped()
        #expect(stuck.returned.isDone && !stuck.loop.isDone)
    }

    @Test func aCompletionWaitIsEndedByItsTasksCancellation() async {
        let never = Completion()
        let task = Task { await never.wait() }
        task.cancel()
        await task.value
        #expect(!never.isDone)
        never.finish()
        await never.wait()  // already done: at once
        never.waitBlocking()
    }
}
