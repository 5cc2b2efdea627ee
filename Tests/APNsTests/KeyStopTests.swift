import APNsCore
import APNs
import Foundation
import Testing
import TestSupport
import Timing
import Crypto
import CurlClient

/// APNs refusing the signing key stops the key, not every device: the sends that met the
/// refusal and every send after it answer `keyStopped` (the latter without a request),
/// and one probe at a time, with backoff, finds out when the key is accepted again.
@Suite(.serialized) struct KeyStopTests {
    /// A client whose token manager runs on `clock` (tokens are issued at its time; the
    /// fake checks their age against the real clock, so it starts at the real time).
    func client(_ fake: FakeAPNs, clock: ManualClock,
                probe: Backoff = Backoff(initial: .seconds(60), maximum: .seconds(600))) throws -> (APNsClient, ProviderTokenManager, CurlHTTP2Transport) {
        let key = try SigningKey.load(file: FakeAPNs.keyFile)
        let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: clock, probeBackoff: probe)
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, timeoutMilliseconds: 10_000), clock: SystemClock())
        return (APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 20), clock: SystemClock()),
                tokens, transport)
    }

    static func keyStopped(_ result: DeliveryResult) -> TransportFailure? {
        guard case .transportFailed(let failure) = result, failure.code == .keyStopped else { return nil }
        return failure
    }

    @Test(arguments: ["InvalidProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken"])
    func anAuthenticationFailureStopsTheKeyAfterOneRoundOfRequests(reason: String) async throws {
        let fake = try FakeAPNs(script: ["keyProblem": reason])
        defer { fake.stop() }
        let clock = ManualClock(wallSeconds: Date().timeIntervalSince1970)
        let (client, tokens, transport) = try client(fake, clock: clock)
        defer { transport.shutdown() }
        let results = await sendAll(client, (0..<600).map { TestRequests.alert($0) }, concurrency: 100)
        let stopped = results.compactMap(Self.keyStopped)
        #expect(stopped.count == 600, "every device is held, none failed on its own: \(Set(results.map(\.label)))")
        let message = try #require(stopped.first?.message)
        #expect(message.contains("403 \(reason)") && message.contains(FakeAPNs.keyId) && message.contains(FakeAPNs.teamId), "\(message)")
        // Only what was already in flight when the first refusal came back reached APNs.
        let sent = fake.received().count
        #expect(sent >= 1 && sent <= 100, "\(sent) requests reached APNs")
        let hold = try #require(tokens.hold())
        #expect(hold.kind == .stopped && hold.reason.rawValue == reason && hold.keyId == FakeAPNs.keyId)
        #expect(hold.until == Int64(clock.wallSeconds()) + 60, "the first probe is due a minute after the stop")
        // While stopped: answered at once, nothing sent.
        #expect(Self.keyStopped(await client.send(TestRequests.alert(1000))) != nil)
        #expect(fake.received().count == sent, "a request reached APNs while the key was stopped")
        #expect(tokens.mintedCount == 1, "no token is minted for a refused key")
    }

    @Test func aYoungTokenAnsweredExpiredIsClockSkewAndStopsTheKeyWithoutMinting() async throws {
        // Apple's clock two hours ahead of ours: every token we sign looks expired there.
        let fake = try FakeAPNs(script: ["appleClockAheadSeconds": 7200])
        defer { fake.stop() }
        let clock = ManualClock(wallSeconds: Date().timeIntervalSince1970)
        let (client, tokens, transport) = try client(fake, clock: clock)
        defer { transport.shutdown() }
        let results = await sendAll(client, (0..<300).map { TestRequests.alert($0) }, concurrency: 100)
        #expect(results.allSatisfy { Self.keyStopped($0) != nil })
        let message = try #require(results.first.flatMap(Self.keyStopped)?.message)
        #expect(message.contains("403 ExpiredProviderToken") && message.contains("clock skew") && message.contains("issued 0 s ago"), "\(message)")
        #expect(tokens.mintedCount == 1, "a token younger than 20 minutes is never replaced")
        #expect(fake.received().count <= 100)
        #expect(tokens.hold()?.reason == .expiredProviderToken)
    }

    @Test func aProbeWithBackoffFindsTheKeyAcceptedAgain() async throws {
        let fake = try FakeAPNs(script: ["keyProblem": "InvalidProviderToken"])
        defer { fake.stop() }
        let clock = ManualClock(wallSeconds: Date().timeIntervalSince1970)
        let (client, tokens, transport) = try client(fake, clock: clock, probe: Backoff(initial: .seconds(10), maximum: .seconds(25)))
        defer { transport.shutdown() }
        #expect(Self.keyStopped(await client.send(TestRequests.alert(0))) != nil)
        let stoppedAt = Int64(clock.wallSeconds())
        #expect(tokens.hold()?.until == stoppedAt + 10)

        // Due: one probe goes (and is refused again); the others are held meanwhile.
        clock.advance(seconds: 10)
        let round = await sendAll(client, (1...50).map { TestRequests.alert($0) }, concurrency: 50)
        #expect(round.allSatisfy { Self.keyStopped($0) != nil })
        #expect(fake.received().count == 2, "exactly one probe went out")
        #expect(tokens.hold()?.until == stoppedAt + 10 + 20, "a refused probe doubles the wait")

        clock.advance(seconds: 20)
        _ = await client.send(TestRequests.alert(51))
        #expect(tokens.hold()?.until == stoppedAt + 30 + 25, "capped at the maximum")
        #expect(fake.received().count == 3)

        // The key is fixed at Apple's side: the next probe is delivered and ends the stop.
        fake.refuseKey(nil)
        clock.advance(seconds: 25)
        guard case .delivered = await client.send(TestRequests.alert(52)) else {
            Issue.record("the probe should be delivered")
            return
        }
        #expect(tokens.hold() == nil)
        let after = await sendAll(client, (60..<260).map { TestRequests.alert($0) })
        #expect(after.allSatisfy { if case .delivered = $0 { true } else { false } })
    }

    @Test func aProbeThatGetsNoAnswerLeavesTheStopAsItWas() throws {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let tokens = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: clock,
                                          probeBackoff: Backoff(initial: .seconds(30), maximum: .seconds(300)))
        guard case .send(let token, probe: false) = try tokens.admit() else {
            Issue.record("sends go before any refusal")
            return
        }
        let hold = tokens.refused(.badEnvironmentKeyInToken, token: token, probe: false)
        #expect(hold.kind == .stopped && hold.until == 1_700_000_030)
        #expect(tokens.refused(.invalidProviderToken, token: token, probe: false) == hold,
                "refusals of requests sent before the stop change nothing")
        #expect(try tokens.admit() == .held(hold))
        clock.advance(seconds: 30)
        guard case .send(_, probe: true) = try tokens.admit() else {
            Issue.record("a probe is due")
            return
        }
        guard case .held = try tokens.admit() else {
            Issue.record("one probe at a time")
            return
        }
        tokens.probeEnded()  // e.g. a timeout
        #expect(tokens.hold()?.until == 1_700_000_060, "the same wait again, not doubled")
        tokens.accepted()
        #expect(tokens.hold() == nil)
        guard case .send(_, probe: false) = try tokens.admit() else {
            Issue.record("sends go again")
            return
        }
    }

    /// TooManyProviderTokenUpdates goes through the same hold: a pause with a fixed end.
    @Test func theTokenUpdatePauseIsAHoldThatEndsByItself() throws {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let tokens = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: clock)
        let token = try tokens.currentToken()
        let hold = tokens.refused(.tooManyProviderTokenUpdates, token: token, probe: false)
        #expect(hold.kind == .paused && hold.until == 1_700_000_000 + 20 * 60)
        #expect(hold.failure.code == .keyStopped && hold.failure.message.contains("TooManyProviderTokenUpdates"))
        #expect(try tokens.admit() == .held(hold))
        clock.advance(seconds: 20 * 60)
        #expect(tokens.hold() == nil)
        #expect(try tokens.admit() == .send(token, probe: false))
    }
}
