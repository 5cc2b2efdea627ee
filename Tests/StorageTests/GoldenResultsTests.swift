import Foundation
import Storage
import Testing
import TestSupport

/// Per-device results of campaigns with every kind of outcome (`GoldenCampaigns`), as the
/// storage contract reports them, against Tests/StorageTests/Fixtures/golden/storage-*.txt,
/// written by the code before segments. Both backends must report the same.
/// Regenerate (only on purpose): see Tests/StorageTests/Fixtures/README.md.
@Suite struct GoldenResultsTests {
    static func report(_ storage: any CampaignStorage, now: Double) throws -> String {
        var lines: [String] = []
        let listed = try storage.campaigns(limit: 100, before: nil)
        lines.append("campaigns newest first: " + listed.map(\.id).joined(separator: " "))
        // Anything at or before now means "look again now": the exact past time is not the contract.
        let due = try storage.nextDueTime(now: now).map { $0 <= now ? "now" : RFC3339.format($0) } ?? "-"
        lines.append("queue depth \(try storage.queueDepth()) next due \(due)")
        for id in GoldenCampaigns.ids {
            let summary = try #require(try storage.campaign(id: id))
            lines.append(GoldenText.summary(summary, now: now))
            let rows = try storage.results(campaign: summary.seq, states: nil, offset: 0, limit: 100_000)
            lines.append("rows \(rows.count)")
            lines += rows.map(GoldenText.row)
            let everyState = Set(DeliveryState.allCases)
            lines.append("reasons (every state): " + (try storage.reasonCounts(campaign: summary.seq, states: everyState))
                .map { "\($0.state.name)/\($0.reason)=\($0.count)" }.joined(separator: " "))
            // Every state alone, and pages of a filter that cross a segment's end.
            for state in DeliveryState.allCases {
                let only = try storage.results(campaign: summary.seq, states: [state], offset: 0, limit: 100_000)
                lines.append("state \(state.name): \(only.count) " + only.prefix(40).map { String($0.index) }.joined(separator: ","))
            }
            let pages: [(Set<DeliveryState>?, Int, Int)] = [
                (nil, 1020, 10), (nil, 1035, 10), (nil, 5000, 10), ([.delivered], 1010, 12), ([.failed, .unregistered], 1, 3),
                ([.retrying, .pending, .inFlight], 0, 5), ([.delivered, .dryRun, .cancelled, .expired], 3, 4),
            ]
            for (states, offset, limit) in pages {
                let page = try storage.results(campaign: summary.seq, states: states, offset: offset, limit: limit)
                let name = states.map { $0.map(\.name).sorted().joined(separator: ",") } ?? "all"
                lines.append("page \(name) offset \(offset) limit \(limit): " + page.map { "\($0.index)/\($0.state.name)" }.joined(separator: " "))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test(arguments: Backend.allCases) func perDeviceResultsMatchTheGolden(_ backend: Backend) throws {
        let storage = try freshStorage(backend, synchronousFull: false)
        try GoldenCampaigns.run(storage) { moment, now in
            let text = try Self.report(storage, now: now)
            if let difference = GoldenText.compare(text, golden: "storage-\(moment.rawValue).txt") {
                Issue.record("\(backend): \(difference)")
            }
        }
    }
}
