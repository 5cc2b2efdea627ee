import APNsCore
import APNs
import Foundation
import Payloads
import Timing
import Testing
import TestSupport

/// A withdrawn owner (a campaign cancelled or paused) or key takes back its requests that
/// have not been written: wherever they wait in the transport, they end without reaching
/// the server; the ones already written are answered as usual.
@Suite(.serialized) struct WithdrawalTests {


    @Test func aWithdrawnOwnersRequestsNotYetWrittenEndNotStartedAndOnlyTheWrittenOnesAreAnswered() async throws {
        let fake = try FakeAPNs()
        defer { fake.stop() }
        // Two streams, held open by the fake until released: eight more wait in the
        // transport (its queue, or libcurl waiting for a stream).
        let (client, _, transport) = try makeClient(fake, retry: RetryPolicy(maxAttempts: 1), timeoutMilliseconds: 30_000, maxConcurrentStreams: 2)
        defer { transport.shutdown() }
        // One answered request first: the connection is up and its two-stream limit known
        // (before the server's SETTINGS arrive, libcurl would open up to 100 streams).
        #expect(await client.send(TestRequests.alert(99)).isDelivered)
        let before = fake.received().count
        fake.holdAnswers()
        let owner = Withdrawal()
        let requests = (0..<10).map { index -> APNsRequest in
            var request = TestRequests.alert(index)
            request.withdrawal = owner.ticket()
            return request
        }
        async let sent = sendAll(client, requests, concurrency: 10)
        #expect(await eventually(timeout: .seconds(30)) { fake.received().count - before >= 2 }, "two on the wire")
        try await Task.sleep(for: .milliseconds(100))  // a third would have had time to go out
        owner.withdraw(because: "campaign c1 was cancelled")
        let onTheWire = fake.received().count - before
        fake.releaseAnswers()
        let results = await sent
        #expect(onTheWire == 2)
        #expect(results.filter { $0.isDelivered }.count == onTheWire, "\(results.map(\.label))")
        let takenBack = results.compactMap { $0.transportFailure }
        #expect(takenBack.count == 10 - onTheWire && takenBack.allSatisfy {
            $0.code == .notStarted && $0.message.contains("campaign c1 was cancelled")
        }, "\(takenBack)")
        #expect(fake.received().count - before == onTheWire, "nothing reached the fake after the withdrawal")
        // A ticket taken after the withdrawal is not covered by it.
        var later = TestRequests.alert(10)
        later.withdrawal = owner.ticket()
        #expect(await client.send(later).isDelivered)
    }

    /// Every request answered 403 InvalidProviderToken, 1,000 devices with 200 in flight (as
    /// `send` runs them) over one connection of 100 streams: the key stops at the first
    /// refusal, and what waited behind the first window never reaches APNs.
    @Test func aRefusedKeySendsAtMostOneWindow() async throws {
        let fake = try FakeAPNs(script: ["keyProblem": "InvalidProviderToken"])
        defer { fake.stop() }
        let (client, _, transport) = try makeClient(fake, timeoutMilliseconds: 10_000)
        defer { transport.shutdown() }
        let results = await sendAll(client, (0..<1_000).map { TestRequests.alert($0) }, concurrency: 200)
        #expect(results.allSatisfy { $0.transportFailure?.code == .keyStopped }, "\(Set(results.map(\.label)))")
        let sent = fake.received().count
        #expect(sent >= 1 && sent <= transport.settings.maxConcurrentStreams, "\(sent) requests reached APNs")
    }
}
