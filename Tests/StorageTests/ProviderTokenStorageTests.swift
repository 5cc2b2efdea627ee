import Foundation
import TestSupport
import Testing
@testable import Storage

@Suite struct ProviderTokenStorageTests {
    let key = SigningKeyName(teamId: "TEAM123456", keyId: "KEY1234567", fingerprint: String(repeating: "ab", count: 32))

    @Test(arguments: Backend.allCases) func aTokenStoredByOneConnectionIsSeenByAnotherAndSurvivesReopening(_ backend: Backend) throws {
        let location = try StoreLocation.fresh(backend)
        let first = try location.open()
        #expect(try first.providerToken(key) == StoredProviderToken())
        let stored = try first.updateProviderToken(key) { _ in StoredProviderToken(compact: "h.c.s", issuedAt: 1000) }
        #expect(stored == StoredProviderToken(compact: "h.c.s", issuedAt: 1000))
        let second = try location.open(instance: "another-host/2/0")
        #expect(try second.providerToken(key) == stored)
        // Another key id, team or fingerprint is another row.
        var other = key
        other.fingerprint = String(repeating: "cd", count: 32)
        #expect(try second.providerToken(other) == StoredProviderToken())
    }

    @Test(arguments: Backend.allCases) func theChangeSeesTheValueUnderTheLockAndNilStoresNothing(_ backend: Backend) throws {
        let location = try StoreLocation.fresh(backend)
        let a = try location.open()
        let b = try location.open(instance: "another-host/2/0")
        _ = try a.updateProviderToken(key) { _ in StoredProviderToken(compact: "first", issuedAt: 1000) }
        // b found it stale before taking the lock; under the lock it sees a's token and keeps it.
        var seen: StoredProviderToken?
        let kept = try b.updateProviderToken(key) { current in
            seen = current
            return current.compact == nil ? StoredProviderToken(compact: "second", issuedAt: 1001) : nil
        }
        #expect(seen?.compact == "first" && kept.compact == "first")
        let paused = try b.updateProviderToken(key) { current in
            var next = current
            next.pausedUntil = 2200
            return next
        }
        #expect(try a.providerToken(key) == paused)
        #expect(paused == StoredProviderToken(compact: "first", issuedAt: 1000, pausedUntil: 2200))
    }

    @Test func aNewDatabaseFileIsReadableByItsOwnerOnly() throws {
        let path = temporaryDatabasePath()
        let storage = try SQLiteCampaignStorage(path: path)
        _ = try storage.updateProviderToken(key) { _ in StoredProviderToken(compact: "secret", issuedAt: 1) }
        for file in [path, path + "-wal", path + "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode & 0o077 == 0, "\(file) has mode \(String(mode, radix: 8))")
        }
    }
}
