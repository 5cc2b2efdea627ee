import Glibc
import OSThreads
import Synchronization
import Testing

@Suite struct TaskThreadTests {
    /// Tasks that prefer the thread run on it, before and after a suspension, many at once
    /// (each resumed from another thread, so the thread sleeps and is woken in between).
    @Test func tasksThatPreferItRunOnItAcrossSuspensions() async throws {
        let thread = try #require(TaskThread(name: "pg-test-tasks"))
        defer { thread.stop() }
        let results = await withTaskGroup(of: (Bool, Bool).self) { group in
            for _ in 0..<200 {
                group.addTask(executorPreference: thread) {
                    let before = thread.runs(on: pthread_self())
                    try? await Task.sleep(for: .milliseconds(1))
                    return (before, thread.runs(on: pthread_self()))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { $0.0 && $0.1 })
        let elsewhere = await Task { thread.runs(on: pthread_self()) }.value
        #expect(!elsewhere)
    }

    /// Once stopped, a task that prefers it still runs (on Dispatch's global queue).
    @Test func aStoppedThreadsTasksStillRunElsewhere() async throws {
        let thread = try #require(TaskThread(name: "pg-test-stop"))
        #expect(await Task(executorPreference: thread) { thread.runs(on: pthread_self()) }.value)
        thread.stop()
        var ranElsewhere = false
        for _ in 0..<100 {
            ranElsewhere = await Task(executorPreference: thread) { !thread.runs(on: pthread_self()) }.value
            if ranElsewhere { break }
            try await Task.sleep(for: .milliseconds(10))  // the loop may still be ending
        }
        #expect(ranElsewhere)
    }
}
