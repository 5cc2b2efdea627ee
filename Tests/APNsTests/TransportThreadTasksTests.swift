import APNsCore
import APNs
import Foundation
import Testing
import TestSupport
import Crypto
import CurlClient
import Timing

/// Tasks that prefer a transport's task thread (`CurlHTTP2Transport.executors`, as `send` runs
/// its devices) run on that thread and end exactly as tasks on the shared pool do: the
/// same result for every device, retries, refusals and resets included.
@Suite struct TransportThreadTasksTests {
    /// A mix of what a campaign meets: a transient error then 200 (a retry with backoff,
    /// so a sleeping task resumes on the thread), a dead token, a final rejection, a
    /// refused stream (libcurl's re-send), a reset after the whole request (an attempt).
    static func script() -> [String: Any] { ["tokens": [
        TestRequests.token(1): [["status": 503, "reason": "ServiceUnavailable"], ["status": 200]],
        TestRequests.token(2): [["status": 410, "reason": "Unregistered", "timestamp": 1_700_000_000_123]],
        TestRequests.token(3): [["status": 400, "reason": "BadDeviceToken"]],
        TestRequests.token(4): [["refuse": true], ["status": 200]],
        TestRequests.token(5): [["reset": 2], ["status": 200]],
    ], "delayMs": 1] }

    /// A result without what differs from run to run (the apns-id APNs makes up).
    static func shape(_ result: DeliveryResult) -> DeliveryResult {
        if case .delivered = result { return .delivered(apnsId: "") }
        return result
    }

    static func run(threads: Int, onTransportThreads: Bool) async throws -> (results: [DeliveryResult], sends: [String: Int]) {
        let fake = try FakeAPNs(script: script())
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNs.keyFile), teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile,
                                                                            connections: threads, threads: threads), clock: SystemClock())
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens,
                                retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 20, maxBackoffMilliseconds: 100), clock: SystemClock())
        let results = await sendAll(client, (0..<400).map { TestRequests.alert($0) }, concurrency: 150,
                                    executors: onTransportThreads ? transport.executors : [])
        var sends: [String: Int] = [:]
        for entry in fake.received() { sends[entry.string("token") ?? "", default: 0] += 1 }
        return (results.map(shape), sends)
    }

    @Test(arguments: [1, 2])
    func everyDeviceEndsAsOnThePool(threads: Int) async throws {
        let pool = try await Self.run(threads: threads, onTransportThreads: false)
        let own = try await Self.run(threads: threads, onTransportThreads: true)
        #expect(own.results == pool.results)
        #expect(own.results[1] == .delivered(apnsId: ""))
        #expect(own.results[2] == .unregistered(reason: .unregistered, timestampMilliseconds: 1_700_000_000_123))
        #expect(own.results[3] == .failed(status: 400, reason: .badDeviceToken))
        #expect(own.results.enumerated().filter { ![2, 3].contains($0.offset) }.allSatisfy { $0.element == .delivered(apnsId: "") })
        #expect(own.sends == pool.sends, "each device sent as often")
        #expect(own.sends[TestRequests.token(1)] == 2 && own.sends[TestRequests.token(5)] == 2 && own.sends[TestRequests.token(4)] == 2)
    }

    @Test func aTaskThatPrefersATaskThreadRunsOnItBeforeAndAfterItsSend() async throws {
        let fake = try FakeAPNs()
        let (client, _, transport) = try makeClient(fake)
        defer { transport.shutdown() }
        let executor = try #require(transport.executors.first)
        let seen = await Task(executorPreference: executor) {
            let before = transport.isCurrentThreadATaskThread
            let result = await client.send(TestRequests.alert(1))
            return (before, transport.isCurrentThreadATaskThread, result)
        }.value
        #expect(seen.0 && seen.1)
        #expect(Self.shape(seen.2) == .delivered(apnsId: ""))
        let elsewhere = await Task { transport.isCurrentThreadATaskThread }.value
        #expect(!elsewhere)
    }

    /// After a shutdown the task thread is gone: a task that prefers it still runs (elsewhere)
    /// and its send ends at once, cancelled, instead of waiting forever.
    @Test func aTaskThatPrefersAStoppedTransportThreadStillRunsAndEnds() async throws {
        let fake = try FakeAPNs()
        let (client, _, transport) = try makeClient(fake)
        let executor = try #require(transport.executors.first)
        #expect(Self.shape(await Task(executorPreference: executor) { await client.send(TestRequests.alert(1)) }.value)
                == .delivered(apnsId: ""))
        transport.shutdown()
        let result = await Task(executorPreference: executor) { await client.send(TestRequests.alert(2)) }.value
        guard case .transportFailed(let failure) = result else { Issue.record("\(result)"); return }
        #expect(failure.code == .cancelled)
    }

    /// `shutdown` returns once every transport thread has ended: none is still in libcurl
    /// and OpenSSL (freeing its easy handles and their TLS sessions) when `send` goes on to
    /// `exit`, whose handlers tear OpenSSL down. It used to return at once, leaving that
    /// cleanup to race the process's exit.
    @Test(arguments: [1, 2])
    func shutdownReturnsOnceTheTransportThreadsHaveEnded(threads: Int) async throws {
        let fake = try FakeAPNs()
        defer { fake.stop() }
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNs.keyFile), teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile,
                                                                            connections: threads, threads: threads), clock: SystemClock())
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(maxAttempts: 1), clock: SystemClock())
        let results = await sendAll(client, (0..<200).map { TestRequests.alert($0) }, concurrency: 100, executors: transport.executors)
        #expect(results.allSatisfy { Self.shape($0) == .delivered(apnsId: "") })
        #expect(transport.runningThreads == threads)
        transport.shutdown()
        #expect(transport.runningThreads == 0, "a transport thread still running after shutdown returned")
        transport.shutdown()  // again: returns at once
    }

    /// At the start of a stop, requests of tasks on the thread that wait in its queue,
    /// and a client's retry, end `notStarted`, like everyone's (StopStartingTests).
    @Test func queuedRequestsOfTasksOnTheThreadEndNotStartedAtTheStop() async throws {
        try await StopStartingTests.stopWithRequestsQueued(onTransportThread: true)
    }
}
