import Foundation
import Testing
@testable import Storage

/// Measures bytes per device of a finished 100k-device campaign with 1% failures
/// (`PUSHGATE_MEASURE_SIZE=1`).
@Suite struct StorageSizeMeasure {
    @Test func bytesPerDevice() throws {
        guard ProcessInfo.processInfo.environment["PUSHGATE_MEASURE_SIZE"] == "1" else { return }
        let path = temporaryDatabasePath()
        let n = 100_000
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        _ = try storage.insert(newCampaign("big"), deliveries: (0..<n).lazy.map { NewDelivery(token: token($0 + 1_000_000)) }, now: 1000)
        var updates: [DeliveryUpdate] = []
        var done = 0
        while done < n {
            let claimed = try storage.recordAndClaim(updates, claimLimit: 1000, lease: testLease, now: 1000)
            updates = claimed.map { c in
                c.index % 100 == 7
                    ? DeliveryUpdate(campaign: c.campaign, index: c.index, state: .failed, status: 400, reason: "BadDeviceToken", lease: c.lease)
                    : DeliveryUpdate(campaign: c.campaign, index: c.index, state: .delivered, status: 200,
                                     apnsID: CampaignMessage.apnsID(prefix: "01234567-89ab-4cde-8f01-", index: c.index), lease: c.lease)
            }
            done += claimed.count
            if claimed.isEmpty { break }
        }
        try storage.record(updates, now: 1001)
        #expect(try storage.campaign(id: "big")?.finishedAt != nil)
        let db = try SQLiteDatabase(path: path)
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let pages = try storage.pageStatistics()
        print("MEASURE devices=\(n) pages=\(pages.pages) free=\(pages.freePages) pageSize=\(pages.pageSize) bytesPerDevice=\(Double((pages.pages - pages.freePages) * pages.pageSize) / Double(n))")
    }
}
