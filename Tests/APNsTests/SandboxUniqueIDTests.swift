import APNs
import Foundation
import StrictJSON
import Testing
import TestSupport

/// Apple's development environment answers with an `apns-unique-id` (what the Push
/// Notifications Console's delivery log looks up); production answers carry none.
@Suite struct SandboxUniqueIDTests {
    @Test func aSandboxAnswerKeepsItsUniqueIDAndProductionHasNone() async throws {
        let sandbox = try FakeAPNs(script: ["environment": "sandbox"])
        let (client, _, transport) = try makeClient(sandbox)
        let results = await sendAll(client, (0..<3).map { TestRequests.alert($0) })
        transport.shutdown()
        let logged = Set(sandbox.log().compactMap { $0.string("uniqueId") })
        #expect(logged.count == 3)
        let kept = results.compactMap { result -> String? in
            if case .delivered(_, let uniqueId) = result { return uniqueId }
            return nil
        }
        #expect(Set(kept) == logged, "each delivery keeps the id its own answer carried")

        let production = try FakeAPNs()
        let (other, _, otherTransport) = try makeClient(production)
        let result = await other.send(TestRequests.alert(7))
        otherTransport.shutdown()
        guard case .delivered(let apnsId, let uniqueId) = result else { Issue.record("not delivered: \(result)"); return }
        #expect(apnsId.count == 36)
        #expect(uniqueId == nil)
    }
}
