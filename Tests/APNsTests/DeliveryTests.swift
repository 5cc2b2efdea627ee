import APNsCore
import APNs
import Foundation
import Payloads
import StrictJSON
import Testing
import TestSupport
import Timing
import Crypto
import CurlClient

@Suite struct DeliveryTests {
    @Test func deliversAndTheFakeAcceptsEveryHeaderAndTheToken() async throws {
        let fake = try FakeAPNs()
        let (client, _, _) = try makeClient(fake)
        let results = await sendAll(client, (0..<20).map { TestRequests.alert($0) })
        for result in results {
            guard case .delivered(let apnsId, _) = result else { Issue.record("not delivered: \(result)"); continue }
            #expect(apnsId.count == 36)
        }
        let log = fake.log()
        #expect(log.count == 20)
        for entry in log {
            #expect(entry.int("status") == 200)
            #expect(entry["violation"] == .null)
            #expect(entry["tokenProblem"] == .null)
            #expect(entry.string("kid") == FakeAPNs.keyId)
            // Only what APNs expects: no form content-type, accept or expect from libcurl.
            #expect(entry["headers"] == .array([.string("apns-priority"), .string("apns-push-type"), .string("apns-topic"),
                                                .string("authorization"), .string("content-length")]))
        }
    }

    @Test func theTypedRequestArrivesAsHeaderLinesInApplesOrder() async throws {
        let fake = try FakeAPNs()
        let (_, tokens, transport) = try makeClient(fake)
        defer { transport.shutdown() }
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), topicOverride: "com.example.other", clock: SystemClock())
        var request = TestRequests.alert(1)
        request.priority = 5
        request.expiration = 0
        request.collapseId = "sale"
        request.apnsID = "00000000-0000-4000-8000-00000000002a"
        guard case .delivered(let echoed, _) = await client.send(request) else { Issue.record("not delivered"); return }
        #expect(echoed == "00000000-0000-4000-8000-00000000002a")
        let lines = fake.log().first?["lines"]?.arrayValue?.compactMap(\.stringValue)
        #expect(lines == ["authorization", "apns-push-type: alert", "apns-topic: com.example.other", "apns-priority: 5",
                          "apns-expiration: 0", "apns-collapse-id: sale", "apns-id: 00000000-0000-4000-8000-00000000002a",
                          "content-length: \(request.body.count)"], "the override in the topic's place")
    }

    @Test func acceptsBothResponseFramings() async throws {
        let fake = try FakeAPNs(script: ["framing": "alternate"])
        let (client, _, _) = try makeClient(fake)
        let results = await sendAll(client, (0..<10).map { TestRequests.alert($0) })
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } })
    }

    @Test func everyDocumentedReasonArrivesTyped() async throws {
        var tokens: [String: Any] = [:]
        for (index, entry) in APNsReason.documented.enumerated() {
            tokens[TestRequests.token(index)] = [["status": entry.status, "reason": entry.string, "timestamp": 1_700_000_000_123]]
        }
        tokens[TestRequests.token(999)] = [["status": 400, "reason": "SomethingNew"]]
        let fake = try FakeAPNs(script: ["tokens": tokens])
        // One attempt: this test is about mapping, not retries. Reasons about the key hold
        // it (KeyStopTests), so each of those is sent through a client of its own;
        // ExpiredProviderToken may not refresh (the token is seconds old): clock skew.
        let (client, _, _) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 1))
        let holdsTheKey = { (entry: (reason: APNsReason, string: String, status: Int)) in
            KeyHold.stopsTheKey(entry.reason) || entry.reason == .tooManyProviderTokenUpdates
        }
        var requests = APNsReason.documented.indices.map { TestRequests.alert($0) }
        requests.append(TestRequests.alert(999))
        let results = await sendAll(client, requests.enumerated().filter { $0.offset >= APNsReason.documented.count
            || !holdsTheKey(APNsReason.documented[$0.offset]) }.map(\.element))
        var next = results.makeIterator()
        for (index, entry) in APNsReason.documented.enumerated() {
            if holdsTheKey(entry) {
                let (own, _, _) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 1))
                let result = await own.send(requests[index])
                guard case .transportFailed(let failure) = result, failure.code == .keyStopped else {
                    Issue.record("\(entry.string) holds the key: \(result)")
                    continue
                }
                #expect(failure.message.contains("APNs answered \(entry.status) \(entry.string)"), "\(failure.message)")
                continue
            }
            let result = next.next()
            if entry.status == 410 {
                #expect(result == .unregistered(reason: entry.reason, timestampMilliseconds: 1_700_000_000_123))
            } else {
                #expect(result == .failed(status: entry.status, reason: entry.reason), "\(entry.string)")
            }
        }
        #expect(results.last == .failed(status: 400, reason: .unknown("SomethingNew")))
    }

    @Test func transientAnswersAreRetriedWithBackoffThenSucceed() async throws {
        let token = TestRequests.token(1)
        let fake = try FakeAPNs(script: ["tokens": [token: [
            ["status": 503, "reason": "ServiceUnavailable"], ["status": 429, "reason": "TooManyRequests"],
            ["status": 500, "reason": "InternalServerError"], ["status": 200]]]])
        let (client, _, _) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 4, baseBackoffMilliseconds: 100, maxBackoffMilliseconds: 1000))
        let result = await client.send(TestRequests.alert(1))
        guard case .delivered = result else { Issue.record("expected delivery, got \(result)"); return }
        let times = fake.log().compactMap { $0.double("time") }
        try #require(times.count == 4)
        // Half of each doubling window is fixed: at least 50, 100, 200 ms apart.
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps[0] >= 0.045 && gaps[1] >= 0.095 && gaps[2] >= 0.195, "gaps \(gaps)")
    }

    @Test func retriesStopAtMaxAttempts() async throws {
        let fake = try FakeAPNs(script: ["default": ["status": 503, "reason": "ServiceUnavailable"]])
        let (client, _, _) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 10, maxBackoffMilliseconds: 20))
        let result = await client.send(TestRequests.alert(1))
        #expect(result == .failed(status: 503, reason: .serviceUnavailable))
        #expect(fake.log().count == 3)
    }

    @Test func retryAfterIsAFloor() async throws {
        let token = TestRequests.token(1)
        let fake = try FakeAPNs(script: ["tokens": [token: [["status": 429, "reason": "TooManyRequests", "retryAfter": 1], ["status": 200]]]])
        let (client, _, _) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 2, baseBackoffMilliseconds: 1, maxBackoffMilliseconds: 2))
        _ = await client.send(TestRequests.alert(1))
        let times = fake.log().compactMap { $0.double("time") }
        try #require(times.count == 2)
        #expect(times[1] - times[0] >= 0.95)
    }

    @Test func rejectionsAreFinal() async throws {
        let fake = try FakeAPNs(script: ["default": ["status": 400, "reason": "BadTopic"]])
        let (client, _, _) = try makeClient(fake)
        #expect(await client.send(TestRequests.alert(1)) == .failed(status: 400, reason: .badTopic))
        #expect(fake.log().count == 1)
    }

    @Test func theServersStreamLimitIsRespected() async throws {
        let fake = try FakeAPNs(script: ["maxConcurrentStreams": 1, "delayMs": 5])
        // The stream limit is what is tested, not the deadline: all 30 are handed to libcurl
        // at once and wait there for the one stream, their deadlines running; in one fully
        // loaded test run the last 13 ended undelivered, as with the default 5 s they would
        // if the fake was starved that long.
        let (client, _, _) = try makeClient(fake, timeoutMilliseconds: 60_000)
        let results = await sendAll(client, (0..<30).map { TestRequests.alert($0) })
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } },
                "not delivered: \(results.filter { if case .delivered = $0 { false } else { true } })")
        let open = fake.log().compactMap { $0.int("openStreams") }
        #expect(open.count == 30 && open.allSatisfy { $0 == 1 }, "never more than one stream open: \(open)")
    }

    @Test func followsTheStreamLimitDownAfterARejectionAndUpAgain() async throws {
        // Like APNs: one stream after each rejection, 100 again after the next success.
        var tokens: [String: Any] = [:]
        for i in stride(from: 50, to: 400, by: 50) { tokens[TestRequests.token(i)] = [["status": 400, "reason": "BadDeviceToken"]] }
        let fake = try FakeAPNs(script: ["apnsStreams": true, "delayMs": 2, "tokens": tokens])
        let (client, _, _) = try makeClient(fake)
        let results = await sendAll(client, (0..<400).map { TestRequests.alert($0) })
        let rejected = results.filter { $0 == .failed(status: 400, reason: .badDeviceToken) }.count
        #expect(rejected == 7)
        #expect(results.filter { if case .delivered = $0 { true } else { false } }.count == 393)
        let log = fake.log()
        #expect(log.count == 400 && Set(log.compactMap { $0.string("token") }).count == 400)
        #expect((log.compactMap { $0.int("openStreams") }.max() ?? 0) > 1, "the raised limit is used")
    }

    @Test func requestsAreMultiplexedOnOneConnection() async throws {
        let fake = try FakeAPNs(script: ["delayMs": 20])
        let (client, _, _) = try makeClient(fake)
        _ = await sendAll(client, (0..<50).map { TestRequests.alert($0) })
        let log = fake.log()
        #expect(Set(log.compactMap { $0.int("connection") }) == [1])
        #expect((log.compactMap { $0.int("openStreams") }.max() ?? 0) > 10)
    }

    /// Two transport threads, each with its own multi handle and one of the two
    /// connections: requests are spread over both, and nothing is lost or sent twice.
    @Test func twoTransportThreadsShareTheLoadEachOnItsOwnConnection() async throws {
        let fake = try FakeAPNs(script: ["delayMs": 2])
        let tokens = ProviderTokenManager(key: try SigningKey.load(file: FakeAPNs.keyFile), teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, connections: 2, threads: 2), clock: SystemClock())
        #expect(transport.threads == 2)
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), clock: SystemClock())
        let results = await sendAll(client, (0..<1_000).map { TestRequests.alert($0) }, concurrency: 200)
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } })
        let log = fake.log()
        #expect(log.count == 1_000 && Set(log.compactMap { $0.string("token") }).count == 1_000)
        var perConnection: [Int: Int] = [:]
        for entry in log { perConnection[entry.int("connection") ?? 0, default: 0] += 1 }
        // Both threads carry a share, each on its own connection. (Not "exactly two, 500
        // each": under load a slow handshake may make a thread open one more.)
        let shares = perConnection.values.sorted(by: >)
        #expect(shares.count >= 2 && shares[1] >= 100, "\(perConnection)")
        #expect(transport.connectionsOpened >= 2)
        // More threads than connections would leave a thread without one: at most one each.
        let capped = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, connections: 1, threads: 4), clock: SystemClock())
        #expect(capped.threads == 1)
        capped.shutdown()
        transport.shutdown()
    }

    @Test func oneTokenAcrossTenThousandSends() async throws {
        let fake = try FakeAPNs(script: ["framing": "alternate"])
        let (client, tokens, _) = try makeClient(fake)
        let results = await sendAll(client, (0..<10_000).map { TestRequests.alert($0) }, concurrency: 200)
        #expect(results.filter { if case .delivered = $0 { true } else { false } }.count == 10_000)
        #expect(tokens.mintedCount == 1)
        let log = fake.log()
        #expect(log.count == 10_000)
        #expect(Set(log.compactMap { $0.int("iat") }).count == 1)
        #expect(log.allSatisfy { $0["tokenProblem"] == .null })
    }

    @Test func goawayMidCampaignLosesNothingAndRepeatsNothingAnswered() async throws {
        let fake = try FakeAPNs(script: ["goawayAfter": 150, "goawayConnections": 3, "delayMs": 2])
        let (client, _, _) = try makeClient(fake)
        let count = 1_000
        let results = await sendAll(client, (0..<count).map { TestRequests.alert($0) })
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } })
        let answered = fake.log().compactMap { $0.string("token") }
        #expect(answered.count == count, "every device answered exactly once")
        #expect(Set(answered).count == count)
        #expect(Set(fake.log().compactMap { $0.int("connection") }).count >= 4, "reconnected after each GOAWAY")
    }

    @Test func aDroppedConnectionIsReestablishedAndLosesNothing() async throws {
        let fake = try FakeAPNs(script: ["dropAfter": 40, "dropConnections": 2])
        let (client, _, transport) = try makeClient(fake)
        let results = await sendAll(client, (0..<300).map { TestRequests.alert($0) }, concurrency: 60)
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } }, "\(results.filter { if case .delivered = $0 { false } else { true } }.prefix(3))")
        let answered = fake.log().compactMap { $0.string("token") }
        #expect(answered.count == 300 && Set(answered).count == 300)
        #expect(Set(fake.log().compactMap { $0.int("connection") }).allSatisfy { $0 >= 3 }, "answers only after two drops")
        #expect(transport.requeuedRequests > 0 && transport.connectionFailures >= 1, "unanswered requests went back to the queue")
    }

    @Test func aServerThatNeverAnswersHitsTheDeadline() async throws {
        let fake = try FakeAPNs(script: ["default": ["noAnswer": true]])
        let (client, _, _) = try makeClient(fake, timeoutMilliseconds: 300)
        // Without the deadline this would never return. (No wall-clock bound here: under a
        // parallel run on 2 cores other tests can hold the cooperative pool for a minute.)
        let results = await sendAll(client, (0..<5).map { TestRequests.alert($0) })
        for result in results {
            guard case .transportFailed(let failure) = result else { Issue.record("expected timeout, got \(result)"); continue }
            #expect(failure.code == .timeout)
            #expect(failure.message.contains("within 300 ms"), "\(failure.message)")
        }
    }

    /// The deadline is armed when a request is written: one that waited in the queue behind
    /// a hung stream is still written and gets its whole deadline (before, the later ones
    /// ended `timeout` without ever reaching the server).
    @Test func timeWaitingInTheQueueDoesNotCountTowardsTheDeadline() async throws {
        let fake = try FakeAPNs(script: ["default": ["noAnswer": true]])
        let key = try SigningKey.load(file: FakeAPNs.keyFile)
        let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        // One request in flight at a time: the others wait in the transport's queue.
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile,
                                                                            maxConcurrentStreams: 1, timeoutMilliseconds: 400), clock: SystemClock())
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), clock: SystemClock())
        let results = await sendAll(client, (0..<4).map { TestRequests.alert($0) })
        let failures = results.compactMap { if case .transportFailed(let f) = $0 { f } else { nil } }
        #expect(failures.count == 4 && failures.allSatisfy { $0.code == .timeout && $0.message.contains("of its last write") },
                "\(failures)")
        let written = Set(fake.received().filter { $0.string("action") == "hang" }.compactMap { $0.string("token") })
        #expect(written == Set((0..<4).map(TestRequests.token)), "every request was written: \(written.count)")
    }

    @Test func nothingListeningFailsAsUnreachable() async throws {
        let fake = try FakeAPNs()
        let url = fake.url
        fake.stop()
        let key = try SigningKey.load(file: FakeAPNs.keyFile)
        let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: url, caFile: fake.caFile, timeoutMilliseconds: 1000, maxResends: 2), clock: SystemClock())
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), clock: SystemClock())
        let result = await client.send(TestRequests.alert(1))
        guard case .transportFailed(let failure) = result else { Issue.record("got \(result)"); return }
        #expect(failure.code == .unreachable)
        #expect(failure.message.hasPrefix("cannot reach APNs at \(url): libcurl error 7"), "\(failure.message)")
    }

    @Test func expiredProviderTokenRefreshesOnceForEveryoneAndRetries() async throws {
        let clock = ManualClock(wallSeconds: SystemClock().wallSeconds())  // the fake refuses tokens over an hour old
        var tokens: [String: Any] = [:]
        for i in 0..<20 { tokens[TestRequests.token(i)] = [["status": 403, "reason": "ExpiredProviderToken"], ["status": 200]] }
        let fake = try FakeAPNs(script: ["tokens": tokens, "delayMs": 20])
        let (client, manager, _) = try makeClient(fake, clock: clock)
        _ = try manager.currentToken()
        // 25 minutes later: past the 20-minute floor, before the 50-minute lazy refresh.
        clock.advance(seconds: 25 * 60)
        let results = await sendAll(client, (0..<20).map { TestRequests.alert($0) })
        #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } }, "\(results)")
        #expect(manager.mintedCount == 2, "concurrent failures cause one refresh")
        #expect(fake.log().count == 40)
    }

    @Test func aCertificateFromAnotherCAIsRefused() async throws {
        let fake = try FakeAPNs()
        let key = try SigningKey.load(file: FakeAPNs.keyFile)
        let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: TestTLS.material?.otherCAFile), clock: SystemClock())
        let result = await APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), clock: SystemClock()).send(TestRequests.alert(1))
        guard case .transportFailed(let failure) = result else { Issue.record("got \(result)"); return }
        #expect(failure.code == .tlsFailed)
        #expect(fake.log().isEmpty)
    }

    @Test func cleartextNeedsALibcurlThatCanReuseIt() throws {
        let settings = TransportSettings(baseURL: "http://127.0.0.1:9")
        if CurlCapabilities.reusesCleartextHTTP2 {
            _ = try CurlHTTP2Transport(settings: settings, clock: SystemClock())
        } else {
            #expect(throws: TransportFailure.self) { try CurlHTTP2Transport(settings: settings, clock: SystemClock()) }
        }
    }

    @Test func expiredProviderTokenDoesNotRefreshWithinTwentyMinutes() async throws {
        let fake = try FakeAPNs(script: ["default": ["status": 403, "reason": "ExpiredProviderToken"]])
        let (client, manager, _) = try makeClient(fake)
        let result = await client.send(TestRequests.alert(1))
        guard case .transportFailed(let failure) = result, failure.code == .keyStopped else {
            Issue.record("a token seconds old answered ExpiredProviderToken is clock skew: the key stops (\(result))")
            return
        }
        #expect(failure.message.contains("ExpiredProviderToken") && failure.message.contains("clock skew"))
        #expect(manager.mintedCount == 1)
        #expect(fake.log().count == 1)
    }
}
