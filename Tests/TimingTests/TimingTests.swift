import Testing
import TestSupport
import Timing

@Suite struct BackoffTests {
    /// A small deterministic generator so the property checks cover many values yet are
    /// the same on every run.
    struct Lehmer { var state: UInt64; mutating func unit() -> Double { state = state &* 6364136223846793005 &+ 1442695040888963407; return Double(state >> 11) / Double(1 << 53) } }

    @Test func withoutJitterItDoublesFromInitialUpToTheCap() {
        let backoff = Backoff(initial: .milliseconds(25), maximum: .seconds(2))
        let delays = (1...10).map { backoff.delay(afterFailures: $0, unit: 0.7).inMilliseconds }
        #expect(delays == [25, 50, 100, 200, 400, 800, 1600, 2000, 2000, 2000])
        #expect(backoff.delay(afterFailures: 0, unit: 0) == .milliseconds(25), "no failures yet reads as the first")
        #expect(backoff.delay(afterFailures: -5, unit: 0) == .milliseconds(25))
    }

    @Test func propertiesHoldForEveryShape() {
        var rng = Lehmer(state: 42)
        for _ in 0..<500 {
            let initial = Duration.milliseconds(Int64(rng.unit() * 10_000))
            let maximum = Duration.milliseconds(Int64(rng.unit() * 100_000))
            let jitter = rng.unit()
            let backoff = Backoff(initial: initial, maximum: maximum, jitter: jitter)
            var previousWindow = Duration.zero
            for failures in [1, 2, 3, 5, 8, 13, 40, 63, 64, 1_000, Int.max] {
                let window = backoff.window(afterFailures: failures)
                #expect(window >= previousWindow, "windows never shrink")
                #expect(window <= backoff.maximum, "never past the cap")
                previousWindow = window
                let unit = rng.unit()
                let delay = backoff.delay(afterFailures: failures, unit: unit)
                #expect(delay <= window, "jitter never adds")
                #expect(delay >= window * (1 - backoff.jitter) - .nanoseconds(1), "the fixed share is always waited")
            }
        }
    }

    @Test func jitterSpreadsWithinTheWindowAndUnitIsClamped() {
        let backoff = Backoff(initial: .milliseconds(200), maximum: .seconds(5), jitter: 0.5)
        #expect(backoff.delay(afterFailures: 1, unit: 0) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 1, unit: 0.5) == .milliseconds(150))
        #expect(backoff.delay(afterFailures: 1, unit: 1.5) < .milliseconds(200))
        #expect(backoff.delay(afterFailures: 1, unit: -3) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 2, unit: 0) == .milliseconds(200))
        let full = Backoff(initial: .seconds(1), maximum: .seconds(1), jitter: 1)
        #expect(full.delay(afterFailures: 1, unit: 0) == .zero)
    }

    @Test func outOfRangeSettingsAreClamped() {
        let capped = Backoff(initial: .seconds(10), maximum: .seconds(3))
        #expect(capped.delay(afterFailures: 1, unit: 0) == .seconds(3), "the cap wins over a larger start")
        let negative = Backoff(initial: .seconds(-1), maximum: .seconds(-2), jitter: 7)
        #expect(negative.delay(afterFailures: 3, unit: 0.5) == .zero)
        #expect(negative.jitter == 1)
        #expect(Backoff(initial: .zero, maximum: .seconds(1)).delay(afterFailures: 50, unit: 0) == .zero)
    }
}

@Suite struct ClockTests {
    @Test func systemClockReadsBothClocks() {
        let clock = SystemClock()
        #expect(clock.wallSeconds() > 1_700_000_000)
        let a = clock.monotonicNanoseconds()
        let b = clock.monotonicNanoseconds()
        #expect(b >= a)
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.milliseconds(1500).inMilliseconds == 1500)
    }

    @Test func manualClockMovesOnlyWhenAdvanced() {
        let clock = ManualClock(wallSeconds: 1_000)
        let start = clock.monotonicNanoseconds()
        #expect(clock.wallSeconds() == 1_000 && clock.monotonicNanoseconds() == start)
        clock.advance(by: .milliseconds(1500))
        #expect(clock.wallSeconds() == 1_001.5)
        #expect(clock.monotonicNanoseconds() - start == 1_500_000_000)
        #expect(clock.secondsSince1970() == 1_001 && clock.millisecondsSince1970() == 1_001_500)
    }

    @Test func manualSleepEndsWhenTheClockPassesItsEnd() async throws {
        let clock = ManualClock()
        let woke = Task { try await clock.sleep(for: .seconds(5)); return clock.monotonicNanoseconds() }
        defer { woke.cancel() }  // never left asleep if an expectation below fails
        try #require(await eventually(timeout: .seconds(60)) { clock.sleeperCount == 1 })
        let start = clock.monotonicNanoseconds()
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1, "4 of 5 seconds: still asleep")
        clock.advance(by: .seconds(1))
        #expect(try await woke.value == start + 5_000_000_000)
        try await clock.sleep(for: .zero)  // nothing to wait for
    }

    @Test func manualSleepThrowsWhenCancelled() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        defer { sleeper.cancel() }
        try #require(await eventually(timeout: .seconds(60)) { clock.sleeperCount == 1 })
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func eventuallyGivesUpAtItsTimeout() async {
        let started = SystemClock().monotonicSeconds()
        #expect(await eventually(timeout: .milliseconds(50)) { false } == false)
        #expect(SystemClock().monotonicSeconds() - started >= 0.05)
        var calls = 0
        #expect(await eventually { calls += 1; return calls == 3 })
        #expect(calls == 3)
    }

    @Test func blockingEventuallyWaitsTheSameWay() {
        let started = SystemClock().monotonicSeconds()
        #expect(eventuallyBlocking(timeout: .milliseconds(30)) { false } == false)
        #expect(SystemClock().monotonicSeconds() - started >= 0.03)
        var calls = 0
        #expect(eventuallyBlocking(interval: .milliseconds(1)) { calls += 1; return calls == 2 })
    }
}
