import Foundation
import Storage

/// Campaigns with every kind of per-device outcome, driven through the storage contract
/// (insert, claim, record, lifecycle, closeStopped) on a fixed clock, so that what a
/// backend reports for them (rows, pages, reasons, the API's JSON) can be compared with a
/// golden written by the code of the day (Tests/StorageTests/Fixtures/golden).
///
/// Every claim takes every due device, and each outcome depends only on the campaign, the
/// device's index and its attempt: the scenario does not depend on the order in which a
/// backend hands devices out.
public enum GoldenCampaigns {
    /// 2026-01-01T00:00:00Z.
    public static let t0: Double = 1_767_225_600
    public static let lease = LeaseTerms(owner: "golden-host/1/0", seconds: 30)
    /// The dispatcher's `maxAttempts` the outcomes below assume (device 2 of `gold-prod` exhausts them).
    public static let maxAttempts = 3
    /// Devices of `gold-prod`: more than one segment (`SegmentLayout.devicesPerSegment`).
    public static let prodDevices = 1040
    public static let channelID = "dHN0LTEyMzQ1Njc4OTAxMjM0NTY3ODkw"
    /// The token an earlier campaign learnt is dead (skipped at intake afterwards).
    public static let deadToken = String(repeating: "d", count: 60) + "dead"
    public static let deadTimestamp: Int64 = 1_766_000_000_000

    /// Moments at which a caller takes a snapshot.
    public enum Moment: String, CaseIterable, Sendable {
        /// After the first claim: pending, in flight and retrying devices, nothing cancelled yet.
        case mid
        /// Every round done: finished campaigns, plus one paused with devices pending and retrying.
        case final
    }

    public static let prefixes: [String: String] = [
        "gold-early": "00000000-0000-4000-8000-",
        "gold-prod": "11111111-2222-4333-8444-",
        "gold-sandbox": "22222222-3333-4444-8555-",
        "gold-dry": "33333333-4444-4555-8666-",
        "gold-cancel": "44444444-5555-4666-8777-",
        "gold-expire": "55555555-6666-4777-8888-",
        "gold-paused": "66666666-7777-4888-8999-",
        "gold-channel": "77777777-8888-4999-8aaa-",
        "gold-unbuildable": "88888888-9999-4aaa-8bbb-",
        "gold-scheduled": "99999999-aaaa-4bbb-8ccc-",
    ]

    /// The campaigns reported (the early one only made a token dead).
    public static let ids = ["gold-prod", "gold-sandbox", "gold-dry", "gold-cancel", "gold-expire", "gold-paused", "gold-channel",
                             "gold-unbuildable", "gold-scheduled"]

    public static func token(_ campaign: Int, _ n: Int) -> String {
        let hex = String(campaign * 100_000 + n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    static func newCampaign(_ id: String, devices: Int, at now: Double, environment: String = "production", dryRun: Bool = false,
                            channel: String? = nil) -> NewCampaign {
        var message = StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10)
        message.channel = channel
        var campaign = NewCampaign(id: id, createdAt: now, dryRun: dryRun, message: message,
                                   body: Array(#"{"aps":{"alert":{"title":"Sale","body":"Today only"}}}"#.utf8),
                                   apnsIDPrefix: prefixes[id] ?? "99999999-9999-4999-8999-")
        campaign.app = "shop"
        campaign.environment = environment
        campaign.owner = "golden-key"
        return campaign
    }

    /// Runs the scenario on an empty store, calling `snapshot` at each moment with the clock's time.
    public static func run(_ storage: any CampaignStorage, snapshot: (Moment, Double) throws -> Void) throws {
        var now = t0
        // An earlier campaign: APNs says the token is dead.
        _ = try storage.insert(newCampaign("gold-early", devices: 1, at: now), deliveries: [NewDelivery(token: deadToken)], now: now)
        for claim in try storage.claim(limit: 10, lease: lease, now: now) {
            try storage.record([DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .unregistered, status: 410,
                                               reason: "Unregistered", timestampMilliseconds: deadTimestamp, lease: claim.lease)], now: now)
        }

        now = t0 + 1
        let prodTokens: [NewDelivery] = (0..<prodDevices).map { i in
            switch i {
            case 5: NewDelivery(token: "ABCDEF0123456789" + String(token(1, i).dropFirst(16)))  // upper case as given
            case 6: NewDelivery(token: String(repeating: "0123456789abcdef", count: 10))  // a 160-digit token
            case 7: NewDelivery(token: deadToken)
            case 8: NewDelivery(token: token(1, i), failureReason: "payloadTooLarge")
            case 9: NewDelivery(token: token(1, i), body: Array(#"{"aps":{"alert":"just for you"}}"#.utf8))
            default: NewDelivery(token: token(1, i))
            }
        }
        _ = try storage.insert(newCampaign("gold-prod", devices: prodDevices, at: now), deliveries: prodTokens, now: now)
        _ = try storage.insert(newCampaign("gold-sandbox", devices: 4, at: now, environment: "sandbox"),
                               deliveries: (0..<4).map { NewDelivery(token: token(2, $0)) }, now: now)
        _ = try storage.insert(newCampaign("gold-dry", devices: 5, at: now, dryRun: true),
                               deliveries: (0..<5).map { NewDelivery(token: token(3, $0)) }, now: now)
        _ = try storage.insert(newCampaign("gold-cancel", devices: 20, at: now),
                               deliveries: (0..<20).map { NewDelivery(token: token(4, $0)) }, now: now)
        var expiring = newCampaign("gold-expire", devices: 10, at: now)
        expiring.expiresAt = t0 + 5
        _ = try storage.insert(expiring, deliveries: (0..<10).map { NewDelivery(token: token(5, $0)) }, now: now)
        _ = try storage.insert(newCampaign("gold-paused", devices: 30, at: now),
                               deliveries: (0..<30).map { NewDelivery(token: token(6, $0)) }, now: now)
        _ = try storage.insert(newCampaign("gold-channel", devices: 1, at: now, channel: channelID),
                               deliveries: [NewDelivery(token: channelID)], now: now)
        _ = try storage.insert(newCampaign("gold-unbuildable", devices: 3, at: now),
                               deliveries: (0..<3).map { NewDelivery(token: token(8, $0), failureReason: "payloadTooLarge") }, now: now)
        var later = newCampaign("gold-scheduled", devices: 3, at: now)
        later.sendAt = t0 + 1000  // after the last snapshot: every device still pending
        _ = try storage.insert(later, deliveries: (0..<3).map { NewDelivery(token: token(9, $0)) }, now: now)
        var names: [Int64: String] = [:]
        for id in ids { if let summary = try storage.campaign(id: id) { names[summary.seq] = id } }

        // Round 1: everything due is claimed; some results are left in flight.
        now = t0 + 2
        var inFlight: [ClaimedDelivery] = []
        try round(storage, names: names, now: now, leftInFlight: &inFlight)
        try snapshot(.mid, t0 + 2.5)

        // Lifecycle: one campaign cancelled, one paused, then the stopped ones closed.
        now = t0 + 3
        _ = try storage.changeLifecycle(id: "gold-cancel", .cancel, now: now)
        _ = try storage.changeLifecycle(id: "gold-paused", .pause, now: now)
        _ = try storage.closeStopped(now: now, limit: 1000)
        // The in-flight window finishes: delivered (gold-expire's after it expired, within its lease).
        now = t0 + 6
        _ = try storage.closeStopped(now: now, limit: 1000)
        try storage.record(inFlight.map { claim in
            DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .delivered, status: 200,
                           apnsID: CampaignMessage.apnsID(prefix: prefixes[names[claim.campaign] ?? ""] ?? "", index: claim.index),
                           lease: claim.lease)
        }, now: now)
        _ = try storage.closeStopped(now: now, limit: 1000)
        // Retries: at their times (the 503 with Retry-After waits longest).
        for at in [t0 + 10, t0 + 20, t0 + 70] {
            var none: [ClaimedDelivery] = []
            try round(storage, names: names, now: at, leftInFlight: &none)
            _ = try storage.closeStopped(now: at, limit: 1000)
        }
        try snapshot(.final, t0 + 100)
    }

    /// Claims every due device and records each one's scripted outcome (nil: left in flight).
    static func round(_ storage: any CampaignStorage, names: [Int64: String], now: Double, leftInFlight: inout [ClaimedDelivery]) throws {
        let claims = try storage.claim(limit: 100_000, lease: lease, now: now)
        var updates: [DeliveryUpdate] = []
        for claim in claims {
            let id = names[claim.campaign] ?? ""
            if let update = outcome(id, claim, now: now) { updates.append(update) } else { leftInFlight.append(claim) }
        }
        try storage.record(updates, now: now)
    }

    /// What the dispatcher would record for this attempt (as `Dispatcher.outcome` maps
    /// APNs' answers), or nil to leave it in flight.
    public static func outcome(_ id: String, _ claim: ClaimedDelivery, now: Double) -> DeliveryUpdate? {
        let derived = CampaignMessage.apnsID(prefix: prefixes[id] ?? "", index: claim.index)
        var update = DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .delivered, status: 200, apnsID: derived,
                                    lease: claim.lease)
        func retrying(_ status: Int?, _ reason: String, next: Double) {
            update.state = .retrying
            update.status = status
            update.reason = reason
            update.apnsID = nil
            update.nextAttemptAt = next
        }
        func failed(_ status: Int, _ reason: String) {
            update.state = .failed
            update.status = status
            update.reason = reason
            update.apnsID = nil
        }
        func givenBack() {
            update = DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .pending, lease: claim.lease)
            update.refundAttempt = true
        }
        switch (id, claim.index, claim.attempt) {
        case ("gold-prod", 1, 1): retrying(429, "TooManyRequests", next: t0 + 10)
        case ("gold-prod", 2, let attempt):
            if attempt < maxAttempts { retrying(503, "ServiceUnavailable", next: now + 8) } else { failed(503, "ServiceUnavailable") }
        case ("gold-prod", 3, _): update.apnsID = "5F3B7C1E-9D2A-4B6C-8E0F-1A2B3C4D5E6F"  // APNs' own id, not the derived one
        case ("gold-prod", 4, 1): retrying(nil, "timeout", next: t0 + 10)
        case ("gold-prod", 10, _): failed(400, "DeviceTokenNotForTopic")
        case ("gold-prod", 11, 1), ("gold-prod", 12, 1): return nil
        case ("gold-prod", 1023, _), ("gold-prod", prodDevices - 1, _):
            update.state = .unregistered
            update.status = 410
            update.reason = "Unregistered"
            update.apnsID = nil
            update.timestampMilliseconds = 1_767_000_000_000 + Int64(claim.index)
        case ("gold-prod", 1024, _): failed(400, "BadDeviceToken")
        case ("gold-prod", 1025, 1): retrying(503, "ServiceUnavailable", next: t0 + 62)  // Retry-After: 60
        case ("gold-sandbox", 0, _), ("gold-sandbox", 1, _):
            update.apnsUniqueID = "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7\(claim.index)"
        case ("gold-sandbox", 2, _): failed(400, "BadDeviceToken")
        case ("gold-sandbox", 3, _):
            update.state = .unregistered
            update.status = 410
            update.reason = "Unregistered"
            update.apnsID = nil
            update.timestampMilliseconds = 1_767_100_000_000
        case ("gold-dry", _, _):
            update.state = .dryRun
            update.status = nil
        case ("gold-cancel", 0, _), ("gold-cancel", 1, _): break
        case ("gold-cancel", 2, _): retrying(503, "ServiceUnavailable", next: t0 + 10)
        case ("gold-cancel", 5, _): return nil
        case ("gold-cancel", _, _): givenBack()  // withdrawn at the cancel before it was written
        case ("gold-expire", let i, _) where i < 3: break
        case ("gold-expire", 3, _): retrying(500, "InternalServerError", next: t0 + 100)
        case ("gold-expire", 9, _): return nil
        case ("gold-expire", _, _): givenBack()
        case ("gold-paused", let i, _) where i < 5: break
        case ("gold-paused", 5, _): retrying(429, "TooManyRequests", next: t0 + 10)
        case ("gold-paused", _, _): givenBack()
        case ("gold-channel", _, _): update.apnsID = "8c3b2a19-0f4e-4d5c-9b6a-7e8f9a0b1c2d"  // the broadcast's apns-request-id
        default: break
        }
        return update
    }
}

/// Text of what a store reports, for golden comparisons.
public enum GoldenText {
    public static func optional<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "-" }

    public static func row(_ row: DeliveryResultRow) -> String {
        [String(row.index), row.token, row.state.name, String(row.attempts), optional(row.status), optional(row.reason), optional(row.apnsID),
         optional(row.apnsUniqueID), optional(row.timestampMilliseconds), row.nextAttemptAt.map(RFC3339.format) ?? "-"].joined(separator: " ")
    }

    public static func summary(_ s: CampaignSummary, now: Double) -> String {
        let counts = DeliveryState.allCases.compactMap { state in s.counts[state].flatMap { $0 == 0 ? nil : "\(state.name)=\($0)" } }
        return "campaign \(s.id) status=\(s.status(at: now).rawValue) devices=\(s.devices) dryRun=\(s.dryRun) lane=\(s.lane.name) "
            + "app=\(s.app) environment=\(s.environment) owner=\(s.owner) created=\(RFC3339.format(s.createdAt)) "
            + "finished=\(s.finishedAt.map(RFC3339.format) ?? "-") sendAt=\(s.sendAt.map(RFC3339.format) ?? "-") expiresAt=\(s.expiresAt.map(RFC3339.format) ?? "-") "
            + "control=\(s.control.rawValue) channel=\(optional(s.channel)) notSent=\(s.notSent(at: now)) counts: \(counts.joined(separator: " "))"
    }

    /// The file in Tests/StorageTests/Fixtures/golden, compared or (with
    /// `PUSHGATE_GOLDEN_WRITE=1`, to regenerate it with the code of the day) written.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("StorageTests/Fixtures/golden")

    /// nil when `text` matches the golden (or was written); else the first difference.
    public static func compare(_ text: String, golden name: String) -> String? {
        let file = folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["PUSHGATE_GOLDEN_WRITE"] == "1" {
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            do { try text.write(to: file, atomically: true, encoding: .utf8) } catch { return "could not write \(file.path): \(error)" }
            return nil
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else { return "no golden \(file.path)" }
        if expected == text { return nil }
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let b = text.split(separator: "\n", omittingEmptySubsequences: false)
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? String(a[i]) : "<end>"
            let y = i < b.count ? String(b[i]) : "<end>"
            if x != y { return "\(name) line \(i + 1):\n  golden: \(x.prefix(600))\n  now:    \(y.prefix(600))" }
        }
        return "\(name) differs"
    }
}
