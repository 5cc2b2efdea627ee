import Testing
@testable import Storage

@Suite struct StateTallyTests {
    /// Campaigns interleaved (the last one is tried first, the others looked up): the
    /// changes are the sums, non-zero only, in (campaign, state) order whatever the order
    /// they were counted in; the totals pick states.
    @Test func changesAreTheSumsInCampaignAndStateOrder() {
        var tally = StateTally()
        tally.move(9, from: .pending, to: .inFlight)
        tally.move(2, from: .pending, to: .inFlight)
        tally.move(9, from: .inFlight, to: .delivered)
        tally.add(2, .failed, 3)
        tally.move(9, from: .pending, to: .inFlight)
        tally.add(5, .skipped, 0)
        tally.move(2, from: .inFlight, to: .unregistered)
        let changes = tally.changes.map { "\($0.campaign) \($0.state.name) \($0.n)" }
        #expect(changes == ["2 pending -1", "2 failed 3", "2 unregistered 1", "9 pending -2", "9 in-flight 1", "9 delivered 1"])
        #expect(tally.totals(where: \.isFinal).map { "\($0.campaign) \($0.n)" } == ["9 1", "2 4", "5 0"])
        #expect(StateTally().changes.isEmpty)
    }
}
