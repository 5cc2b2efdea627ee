import APNsCore
import APNs
import Foundation
import Testing
import TestSupport
import Crypto
import CurlClient
import Timing

/// `send(_:awaitingOn:then:)`, the path the dispatcher takes (a 200 handed on from the
/// transport's thread, anything else settled in a task), ends every device exactly as
/// awaiting `send` does: the same result, retries, refusals and resets included.
@Suite struct CallbackSendTests {
    /// A mix of what a campaign meets: a transient error then 200 (a retry with backoff,
    /// settled in a task after the callback), a dead token, a final rejection, a refused
    /// stream (libcurl's re-send), a reset after the whole request (an attempt).
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

    static func run(threads: Int, throughCallbacks: Bool) async throws -> (results: [DeliveryResult], sends: [String: Int]) {
        let fake = try FakeAPNs(script: script())
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNs.keyFile), teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile,
                                                                            connections: threads, threads: threads), clock: SystemClock())
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens,
                                retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 20, maxBackoffMilliseconds: 100), clock: SystemClock())
        let results = await sendAll(client, (0..<400).map { TestRequests.alert($0) }, concurrency: 150, throughCallbacks: throughCallbacks)
        var sends: [String: Int] = [:]
        for entry in fake.received() { sends[entry.string("token") ?? "", default: 0] += 1 }
        return (results.map(shape), sends)
    }

    @Test(arguments: [1, 2])
    func everyDeviceEndsAsWhenAwaited(threads: Int) async throws {
        let awaited = try await Self.run(threads: threads, throughCallbacks: false)
        let called = try await Self.run(threads: threads, throughCallbacks: true)
        #expect(called.results == awaited.results)
        #expect(called.results[1] == .delivered(apnsId: ""))
        #expect(called.results[2] == .unregistered(reason: .unregistered, timestampMilliseconds: 1_700_000_000_123))
        #expect(called.results[3] == .failed(status: 400, reason: .badDeviceToken))
        #expect(called.results.enumerated().filter { ![2, 3].contains($0.offset) }.allSatisfy { $0.element == .delivered(apnsId: "") })
        #expect(called.sends == awaited.sends, "each device sent as often")
        #expect(called.sends[TestRequests.token(1)] == 2 && called.sends[TestRequests.token(5)] == 2 && called.sends[TestRequests.token(4)] == 2)
    }

    /// After a shutdown a send through a callback is answered at once, cancelled, instead
    /// of never.
    @Test func aSendAfterTheShutdownIsAnsweredAtOnce() async throws {
        let fake = try FakeAPNs()
        let (client, _, transport) = try makeClient(fake)
        #expect(Self.shape(await client.sendThroughCallback(TestRequests.alert(1))) == .delivered(apnsId: ""))
        transport.shutdown()
        let result = await client.sendThroughCallback(TestRequests.alert(2))
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
        let results = await sendAll(client, (0..<200).map { TestRequests.alert($0) }, concurrency: 100, throughCallbacks: true)
        #expect(results.allSatisfy { Self.shape($0) == .delivered(apnsId: "") })
        #expect(transport.runningThreads == threads)
        transport.shutdown()
        #expect(transport.runningThreads == 0, "a transport thread still running after shutdown returned")
        transport.shutdown()  // again: returns at once
    }
}
