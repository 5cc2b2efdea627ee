import Foundation
import PostgresStorage
import Storage
import TestSupport
import Timing

/// The storage contract's two backends: the contract tests run once against each.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres
    var description: String { rawValue }
}

/// Where a test's store lives, so it can be opened a second time (another instance, a restart).
struct StoreLocation: Sendable {
    var backend: Backend
    /// The SQLite file, or the PostgreSQL database's URL.
    var address: String

    /// A new, empty store: a file in a temporary folder, or a database of its own in the
    /// test cluster.
    static func fresh(_ backend: Backend) throws -> StoreLocation {
        switch backend {
        case .sqlite: StoreLocation(backend: backend, address: temporaryDatabasePath())
        case .postgres: StoreLocation(backend: backend, address: try PostgresCluster.shared().newDatabaseURL())
        }
    }

    /// `segmentSize`: devices per segment of the campaigns it writes (small ones put a few
    /// devices in several segments, which several owners can hold at once).
    func open(instance: String = "test-host/1/0", synchronousFull: Bool = true,
              segmentSize: Int = SegmentLayout.devicesPerSegment) throws -> any CampaignStorage {
        switch backend {
        case .sqlite: return try SQLiteCampaignStorage(path: address, options: .init(synchronousFull: synchronousFull, segmentSize: segmentSize))
        case .postgres:
            var options = PostgresCampaignStorage.Options(url: address, poolSize: 2, instance: instance, clock: SystemClock())
            options.segmentSize = segmentSize
            return try PostgresCampaignStorage(options: options)
        }
    }

    /// What `pushgate storage status` shows for it.
    func status(now: Double) throws -> StorageStatus? {
        switch backend {
        case .sqlite: try SQLiteCampaignStorage.status(path: address, now: now)
        case .postgres: try PostgresCampaignStorage(options: .init(url: address, poolSize: 1, instance: "probe", readOnly: true, clock: SystemClock())).status(now: now)
        }
    }

    func schemaVersion() throws -> Int {
        switch backend {
        case .sqlite: return try SQLiteCampaignStorage(path: address).schemaVersion()
        case .postgres:
            // Inspected, not opened: a read-only open refuses a schema it would have to migrate.
            var options = PostgresCampaignStorage.Options(url: address, poolSize: 1, instance: "probe", readOnly: true, clock: SystemClock())
            options.inspectOnly = true
            return try PostgresCampaignStorage(options: options).schemaVersion()
        }
    }
}

/// A new, empty store of `backend`.
func freshStorage(_ backend: Backend, synchronousFull: Bool = true,
                  segmentSize: Int = SegmentLayout.devicesPerSegment) throws -> any CampaignStorage {
    try StoreLocation.fresh(backend).open(synchronousFull: synchronousFull, segmentSize: segmentSize)
}
