import Foundation
@testable import PostgresStorage
import StrictJSON
import Testing
import TestSupport
@testable import Storage

/// Databases written by the pushgate before segments (Tests/StorageTests/Fixtures/migration,
/// made by scripts/make-migration-fixtures.py: SQLite at schema 11, a PostgreSQL dump at
/// schema 6), opened with the code of the day: every campaign's counts, result pages and
/// reasons are what the API showed when the fixture was made, and the unfinished campaign
/// continues — its pending and retrying devices, and only those, are claimed and finish it.
@Suite struct MigrationFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/migration")
    static let sqliteSchema = 11
    static let postgresSchema = 6

    /// The fixture loaded into a store of its own: the file copied, or the dump restored into a new database.
    static func open(_ backend: Backend) throws -> (StoreLocation, any CampaignStorage) {
        switch backend {
        case .sqlite:
            let path = temporaryDatabasePath()
            try FileManager.default.copyItem(atPath: folder.appendingPathComponent("sqlite-schema\(sqliteSchema).db").path, toPath: path)
            // The file as written: its schema before anything opened it.
            do {
                let version = try SQLiteDatabase(path: path).statement("PRAGMA user_version")
                #expect(try version.step() && version.int(0) == Int64(sqliteSchema))
            }
            let location = StoreLocation(backend: .sqlite, address: path)
            return (location, try location.open())
        case .postgres:
            let cluster = try PostgresCluster.shared()
            let url = try cluster.newDatabaseURL()
            let database = String(url.split(separator: "/").last ?? "")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres",
                                 "-d", database, "-f", folder.appendingPathComponent("postgres-schema\(postgresSchema).sql").path]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "psql could not restore the dump")
            let location = StoreLocation(backend: .postgres, address: url)
            #expect(try location.schemaVersion() == postgresSchema)
            return (location, try location.open(instance: "migration-test/1/0"))
        }
    }

    static func expected(_ backend: Backend) throws -> [String: JSONObject] {
        let data = try Data(contentsOf: folder.appendingPathComponent("expected-\(backend).json"))
        let root = try #require(try JSONParser().parse(Array(data)).objectValue)
        var campaigns: [String: JSONObject] = [:]
        for item in root["campaigns"]?.arrayValue ?? [] {
            if let object = item.objectValue, let name = object["name"]?.stringValue { campaigns[name] = object }
        }
        return campaigns
    }

    /// A row as the API's `results` member writes it (`CampaignJSON.detail`), less `environment`.
    static func json(_ row: DeliveryResultRow) -> [String: String] {
        var shown = ["index": String(row.index), "token": row.token, "state": row.state.name, "attempts": String(row.attempts)]
        if let status = row.status { shown["status"] = String(status) }
        if let reason = row.reason { shown["reason"] = reason }
        if let id = row.apnsID { shown["apns_id"] = id }
        if let id = row.apnsUniqueID { shown["apns_unique_id"] = id }
        if let ts = row.timestampMilliseconds { shown["timestamp_ms"] = String(ts) }
        if let next = row.nextAttemptAt { shown["next_attempt_at"] = RFC3339.format(next) }
        return shown
    }

    static func json(_ object: JSONObject) -> [String: String] {
        var shown: [String: String] = [:]
        for key in object.keys where key != "environment" {
            switch object[key] {
            case .string(let text): shown[key] = text
            case .number(let digits): shown[key] = digits
            default: break
            }
        }
        return shown
    }

    @Test(arguments: Backend.allCases) func theFixtureHoldsWhatTheAPIShowedAndTheUnfinishedCampaignContinues(_ backend: Backend) throws {
        let (location, storage) = try Self.open(backend)
        // Opened means migrated to this pushgate's schema.
        #expect(try location.schemaVersion() == (backend == .sqlite ? Schema.currentVersion : PostgresSchema.currentVersion))
        let expected = try Self.expected(backend)
        #expect(Set(expected.keys) == ["early", "finished", "unfinished"])
        var unfinished: (seq: Int64, open: Set<Int>, retrying: Set<Int>, devices: Int)?
        for (name, shown) in expected.sorted(by: { $0.key < $1.key }) {
            let campaign = try #require(shown["campaign"]?.objectValue)
            let id = try #require(campaign["id"]?.stringValue)
            let summary = try #require(try storage.campaign(id: id), "campaign \(name) (\(id)) is missing")
            #expect(Int64(summary.devices) == campaign["devices"]?.int64Value)
            let counts = campaign["counts"]?.objectValue ?? JSONObject()
            for state in DeliveryState.allCases {
                #expect(Int64(summary.counts[state] ?? 0) == counts[state.name]?.int64Value, "\(name): \(state.name)")
            }
            #expect(summary.finishedAt.map(RFC3339.format) == campaign["finished_at"]?.stringValue, "\(name): finished_at")
            #expect(RFC3339.format(summary.createdAt) == campaign["created_at"]?.stringValue)
            #expect(summary.app == (campaign["app"]?.stringValue ?? "") && summary.environment == (campaign["environment"]?.stringValue ?? ""))
            // Paused while its pages were read, then resumed without the server.
            #expect(summary.status(at: Date().timeIntervalSince1970).rawValue == (name == "unfinished" ? "sending" : campaign["status"]?.stringValue))

            let rows = (campaign["results"]?.arrayValue ?? []).compactMap(\.objectValue).map(Self.json)
            let stored = try storage.results(campaign: summary.seq, states: nil, offset: 0, limit: 100_000)
            #expect(stored.count == rows.count, "\(name): rows")
            for (mine, theirs) in zip(stored.map(Self.json), rows) where mine != theirs {
                Issue.record("\(name): \(mine) instead of \(theirs)")
                break
            }
            // A page in the middle, and a state filter.
            let page = try storage.results(campaign: summary.seq, states: nil, offset: 100, limit: 50).map(Self.json)
            #expect(page == Array(rows.dropFirst(100).prefix(50)), "\(name): the page at 100")
            let failedStates: Set<DeliveryState> = [.failed, .unregistered, .skipped, .retrying]
            let failed = try storage.results(campaign: summary.seq, states: failedStates, offset: 0, limit: 1000).map(Self.json)
            #expect(failed == rows.filter { DeliveryState(name: $0["state"] ?? "").map(failedStates.contains) ?? false }, "\(name): ?state=")
            let reasons = try storage.reasonCounts(campaign: summary.seq, states: [.delivered, .failed, .unregistered, .retrying, .skipped])
            let shownReasons = (shown["reasons"]?.arrayValue ?? []).compactMap(\.objectValue).map {
                "\($0["state"]?.stringValue ?? "")/\($0["reason"]?.stringValue ?? "")=\($0["count"]?.int64Value ?? -1)"
            }
            #expect(reasons.map { "\($0.state.name)/\($0.reason)=\($0.count)" } == shownReasons, "\(name): reasons")
            if name == "unfinished" {
                let open = stored.filter { $0.state == .pending || $0.state == .retrying }
                #expect(open.count > 0 && stored.contains { $0.state == .delivered })
                unfinished = (summary.seq, Set(open.map(\.index)), Set(open.filter { $0.state == .retrying }.map(\.index)), summary.devices)
            }
        }

        // It continues: what was pending or retrying is claimed (once each, nothing else),
        // the rate cap permitting, and finishes the campaign.
        let (seq, open, retrying, devices) = try #require(unfinished)
        var now = Date().timeIntervalSince1970 + 2 * 86_400  // past the Retry-After of a day
        var claimed: [Int: Int] = [:]
        for _ in 0..<500 where claimed.count < open.count {
            let claims = try storage.claim(limit: 5000, lease: testLease, now: now)
            #expect(claims.allSatisfy { $0.campaign == seq }, "only the unfinished campaign has devices to send")
            for claim in claims { claimed[claim.index] = claim.attempt }
            try storage.record(claims.map { DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .delivered, status: 200, lease: $0.lease) },
                               now: now)
            now += 60
        }
        #expect(Set(claimed.keys) == open, "\(claimed.count) claimed of \(open.count) pending or retrying")
        #expect(retrying.allSatisfy { claimed[$0] == 2 } && open.subtracting(retrying).allSatisfy { claimed[$0] == 1 }, "attempts")
        let finished = try #require(try storage.campaigns(limit: 10, before: nil).first { $0.seq == seq })
        #expect(finished.finishedAt != nil && finished.counts[.delivered] == devices)
        #expect(try storage.queueDepth() == 0)
    }
}
