import Foundation
import TestSupport
import Testing
@testable import Storage

/// The space target: a finished campaign with 1% failures takes at most 64 bytes
/// per device in the file, indexes included (a row per device took 146).
/// `PUSHGATE_SIZE_DEVICES` sets the campaign's size (default 20,000).
@Suite struct StorageSizeTests {
    @Test func aFinishedCampaignWithOnePercentFailuresTakesAtMost64BytesPerDevice() throws {
        let n = ProcessInfo.processInfo.environment["PUSHGATE_SIZE_DEVICES"].flatMap { Int($0) } ?? 20_000
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let empty = try storage.pageStatistics()
        let writtenBefore = Self.bytesWritten()
        _ = try storage.insert(newCampaign("big"), deliveries: (0..<n).lazy.map { NewDelivery(token: token($0 + 1_000_000)) }, now: 1000)
        var updates: [DeliveryUpdate] = []
        while true {
            let claimed = try storage.recordAndClaim(updates, claimLimit: 1000, lease: testLease, now: 1000)
            updates = claimed.map { c in
                c.index % 100 == 7
                    ? DeliveryUpdate(campaign: c.campaign, index: c.index, state: .failed, status: 400, reason: "BadDeviceToken", lease: c.lease)
                    : DeliveryUpdate(campaign: c.campaign, index: c.index, state: .delivered, status: 200,
                                     apnsID: CampaignMessage.apnsID(prefix: "01234567-89ab-4cde-8f01-", index: c.index), lease: c.lease)
            }
            if claimed.isEmpty { break }
        }
        let summary = try #require(try storage.campaign(id: "big"))
        #expect(summary.finishedAt != nil && summary.counts[.delivered] == n - n / 100 && summary.counts[.failed] == n / 100)
        let written = Self.bytesWritten() - writtenBefore
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let full = try storage.pageStatistics()
        let perDevice = Double((full.pages - full.freePages - empty.pages + empty.freePages) * full.pageSize) / Double(n)
        // What the process wrote (write(2) calls: WAL frames and the checkpoints that copy
        // them into the file), in claims and records of 1,000: for the report, not a target.
        print("storage: \(n) devices, 1% failed: \(perDevice) bytes per device (page_count × page_size); "
              + "written while sending: \(Double(written) / Double(n)) bytes per device (WAL and checkpoints)")
        #expect(perDevice <= 64)
    }

    /// `wchar` of /proc/self/io: bytes this process passed to write(2) so far.
    static func bytesWritten() -> Int {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
              let line = io.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") }) else { return 0 }
        return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
}

/// `journalBytesWritten` counts exactly what the writer appended to the WAL: after a
/// checkpoint that empties the file, the WAL's size is its 32-byte header and the frames
/// one write added.
@Suite struct JournalBytesTests {
    @Test func theWALCounterIsTheFramesTheWriterAppended() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false))
        _ = try storage.insert(newCampaign("first"), deliveries: (0..<10).map { NewDelivery(token: token($0)) }, now: 1000)
        let checkpointer = try SQLiteDatabase(path: path)
        try checkpointer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(Self.size(path + "-wal") == 0)
        let before = try #require(storage.journalBytesWritten)
        _ = try storage.insert(newCampaign("second"), deliveries: (0..<3000).map { NewDelivery(token: token($0 + 10)) }, now: 1000)
        let claimed = try storage.recordAndClaim([], claimLimit: 500, lease: testLease, now: 1000)
        #expect(claimed.count == 500)
        let after = try #require(storage.journalBytesWritten)
        #expect(after > before)
        #expect((after - before) % (1024 + 24) == 0, "whole frames of a new database's 1 KB pages")
        #expect(Self.size(path + "-wal") == 32 + (after - before), "the WAL holds the header and exactly the frames counted")
    }

    static func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? -1
    }
}
