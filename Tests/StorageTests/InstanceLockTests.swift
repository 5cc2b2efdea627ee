import Foundation
import TestSupport
import Testing
@testable import Storage

@Suite struct InstanceLockTests {
    let me = InstanceID(host: "gw-1", pid: 4242, startedAt: 1_764_576_000)

    @Test func aSecondOwnerIsRefusedNamingTheFirstUntilItCloses() throws {
        let path = temporaryDatabasePath()
        var first: SQLiteCampaignStorage? = try SQLiteCampaignStorage(path: path, options: .init(access: .owner(me)))
        #expect(first != nil)
        do {
            _ = try SQLiteCampaignStorage(path: path, options: .init(access: .owner(InstanceID.current(now: 1))))
            Issue.record("a second owner was let in")
        } catch {
            #expect(error.code == .inUse)
            #expect(error.message == "storage in use by pid 4242 on gw-1 since 2025-12-01T08:00:00.000Z")
        }
        // Readers and token sharers are welcome meanwhile.
        _ = try SQLiteCampaignStorage(path: path, options: .init(access: .shared))
        _ = try SQLiteCampaignStorage(path: path, options: .init(access: .readOnly))
        first = nil
        _ = try SQLiteCampaignStorage(path: path, options: .init(access: .owner(InstanceID.current(now: 2))))
    }

    @Test func theLockFileIsReadLineByLineWhateverItsLineEnds() {
        let written = Array(me.fileText.utf8)
        #expect(InstanceID(fileText: written) == me)
        let crlf = Array("pid=4242\r\nhost=gw-1\r\n\r\nsince=1764576000.0".utf8)
        #expect(InstanceID(fileText: crlf) == me, "CR before LF, a blank line and no final LF")
        #expect(InstanceID(fileText: Array("pid=4242\nhost=gw-1\n".utf8)) == nil, "since is missing")
        #expect(InstanceID(fileText: []) == nil)
    }

    @Test func readOnlyNeverMigratesAndNeverWrites() throws {
        let path = temporaryDatabasePath()
        do {
            let old = try SQLiteDatabase(path: path)
            try old.execute(Schema.migrations[0])
            try old.execute("PRAGMA user_version = 1")
        }
        #expect(throws: StorageError.self) { try SQLiteCampaignStorage(path: path, options: .init(access: .readOnly)) }
        do { _ = try SQLiteCampaignStorage(path: path, options: .init(access: .readOnly)) } catch {
            #expect(error.code == .schemaTooOld)
            #expect(error.message.contains("version 1") && error.message.contains("pushgate serve"))
        }
        let check = try SQLiteDatabase(path: path, readOnly: true)
        #expect(try Migrator.version(check) == 1, "untouched")

        let current = temporaryDatabasePath()
        _ = try SQLiteCampaignStorage(path: current)
        let reader = try SQLiteCampaignStorage(path: current, options: .init(access: .readOnly))
        #expect(try reader.campaigns(limit: 10, before: nil).isEmpty)
        #expect(throws: StorageError.self) { try reader.purgeIdempotencyKeys(olderThan: 0) }
    }

    @Test func aTokenSharerDoesNotMigrateUnderARunningOwner() throws {
        let path = temporaryDatabasePath()
        let owner = try SQLiteCampaignStorage(path: path, options: .init(access: .owner(me)))
        // Pretend the owner is an older pushgate: its database is one version behind.
        try owner.writing { db throws(StorageError) in try db.execute("PRAGMA user_version = 1") }
        do { _ = try SQLiteCampaignStorage(path: path, options: .init(access: .shared)) } catch {
            #expect(error.code == .inUse)
            #expect(error.message.contains("pid 4242 on gw-1"))
        }
    }
}
