import Foundation
import Payloads
import TestSupport
import Testing

/// Byte-for-byte previews of the shipped example campaigns (one per shipped template, an
/// inline alert, a Live Activity's start, update and end, and a broadcast on a channel), with sequential `apns-id`s so the output is stable. After a
/// deliberate change, rerun with PUSHGATE_UPDATE_GOLDENS=1 and review the diff.
@Suite struct GoldenPreviewTests {
    static let campaigns = ["order-ready", "price-drop", "abandoned-cart", "inline-alert",
                            "live-activity-start", "live-activity-update", "live-activity-end", "live-activity-template",
                            "live-activity-channel"]

    @Test(arguments: campaigns)
    func previewMatchesGolden(_ name: String) throws {
        let plan = try Fixtures.planner().plan(jsonBytes: try Fixtures.bytes("config/\(name == "live-activity-template" ? "live-activity" : "campaigns")/\(name).json")).get()
        let preview = try CampaignPreview(plan: plan) { APNsID.sequential($0 + 1) }
        try compare(Array(preview.text.utf8), golden: "\(name).txt")
        try compare(preview.json + Array("\n".utf8), golden: "\(name).json")
    }

    @Test func rejectionGolden() throws {
        let json = #"{"template": "order_ready", "locale": "pl", "priority": 7, "variables": {"store_name": "Rynek"}, "devices": ["zz", {"token": "\#(Fixtures.tokenA)", "variables": {"order_id": "nope"}}, {"token": "\#(Fixtures.tokenB)"}]}"#
        guard case .failure(let rejection) = Fixtures.plan(json) else {
            Issue.record("accepted an invalid campaign")
            return
        }
        try compare(Array(CampaignPreview.text(for: rejection).utf8), golden: "rejected.txt")
        try compare(CampaignPreview.json(for: rejection) + Array("\n".utf8), golden: "rejected.json")
    }

    private func compare(_ actual: [UInt8], golden: String) throws {
        let url = TestPaths.packageRoot.appendingPathComponent("Tests/PayloadsTests/Goldens/\(golden)")
        if ProcessInfo.processInfo.environment["PUSHGATE_UPDATE_GOLDENS"] == "1" {
            try Data(actual).write(to: url)
            return
        }
        let expected = try Array(Data(contentsOf: url))
        #expect(String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self), "\(golden) differs")
    }
}
