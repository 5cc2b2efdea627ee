import APNsCore
import APNs
import Foundation
import Synchronization
import Testing
import TestSupport
import Crypto
import CurlClient
import Timing

/// The first step of a stop (`stopStartingRequests`): no request starts any more, not one
/// waiting in the transport's queue, not a client's own retry; each comes back
/// `notStarted`, and only what was already on the wire is answered.
@Suite struct StopStartingTests {
    static func code(_ result: DeliveryResult) -> String {
        switch result {
        case .delivered: return "delivered"
        case .transportFailed(let failure): return failure.code.rawValue
        default: return "\(result)"
        }
    }

    @Test func queuedRequestsAndRetriesDoNotStartAfterTheStop() async throws {
        try await Self.stopWithRequestsQueued(throughCallbacks: false)
    }

    /// The same for requests sent as the dispatcher sends them (`send(_:awaitingOn:then:)`):
    /// the first device's retry runs in a task after its callback.
    @Test func queuedRequestsAndRetriesSentThroughCallbacksDoNotStartAfterTheStop() async throws {
        try await Self.stopWithRequestsQueued(throughCallbacks: true)
    }

    static func stopWithRequestsQueued(throughCallbacks: Bool) async throws {
        // The fake holds every answer until told: both streams stay busy, with no timing
        // window. The first device is answered 503, so the client would retry it after the stop.
        let retried = TestRequests.token(0)
        let fake = try FakeAPNs(script: ["tokens": [retried: [["status": 503, "reason": "ServiceUnavailable"], ["status": 200]]]])
        defer { fake.stop() }
        fake.holdAnswers()
        let key = try SigningKey.load(file: FakeAPNs.keyFile)
        let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        // One connection, two streams: two requests in flight, the rest wait in the
        // transport. The held streams' deadline is far beyond the set-up's hang guards.
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, connections: 1,
                                                                           maxConcurrentStreams: 2, timeoutMilliseconds: 600_000), clock: SystemClock())
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens,
                                retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 10, maxBackoffMilliseconds: 20), clock: SystemClock())
        let send: @Sendable (APNsRequest) async -> DeliveryResult = { request in
            throughCallbacks ? await client.sendThroughCallback(request) : await client.send(request)
        }
        let results = await withTaskGroup(of: (Int, DeliveryResult).self, returning: [Int: DeliveryResult].self) { group in
            for i in 0..<2 {
                group.addTask { (i, await send(TestRequests.alert(i))) }
            }
            // Hang guards, not speed checks: at the start of a parallel run the set-up can
            // take a minute (the fake's handshake may miss libcurl's 5 s connect timeout).
            #expect(await eventually(timeout: .seconds(180)) { fake.received().count >= 2 }, "two requests on the wire")
            let started = StartedCount()
            for i in 2..<8 {
                group.addTask {
                    started.value.withLock { $0 += 1 }  // its request is handed over next, or after the stop
                    return (i, await send(TestRequests.alert(i)))
                }
            }
            #expect(await eventually(timeout: .seconds(180)) { started.value.withLock { $0 } == 6 })
            transport.stopStartingRequests()
            fake.releaseAnswers()
            var all: [Int: DeliveryResult] = [:]
            for await (i, result) in group { all[i] = result }
            return all
        }
        let codes = (0..<8).map { results[$0].map(Self.code) ?? "missing" }
        #expect(codes[0] == "notStarted", "answered 503 after the stop: its retry does not start (\(codes))")
        #expect(codes[1] == "delivered", "on the wire before the stop: answered (\(codes))")
        #expect(codes[2...].allSatisfy { $0 == "notStarted" }, "\(codes)")
        // A send after the stop is refused at once, without a request.
        #expect(Self.code(await send(TestRequests.alert(9))) == "notStarted")
        let received = fake.received().compactMap { $0["token"]?.stringValue }
        #expect(received.sorted() == [TestRequests.token(0), TestRequests.token(1)].sorted(),
                "only the two sent before the stop reached the fake, once each: \(received)")
    }
}

/// Counts tasks that began (a Mutex itself cannot be captured by a task's closure).
private final class StartedCount: Sendable {
    let value = Mutex(0)
}
