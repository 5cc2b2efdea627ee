import Testing
import Storage

/// A campaign that must not list a token twice (`rejectDuplicateTokens`) is refused whole,
/// naming both devices, whether the two are in one segment or in two, on both backends.
@Suite struct DuplicateTokenTests {
    @Test(arguments: Backend.allCases) func aTokenListedTwiceIsRefusedInOneSegmentOrAcrossSegments(_ backend: Backend) throws {
        let storage = try freshStorage(backend, segmentSize: 4)
        var campaign = newCampaign("dup")
        campaign.rejectDuplicateTokens = true
        for (first, second) in [(1, 3), (2, 9)] {
            let devices = (0..<12).map { NewDelivery(token: token($0 == second ? first : $0)) }
            do {
                _ = try storage.insert(campaign, deliveries: devices, now: 1000)
                Issue.record("devices \(first) and \(second) share a token and were accepted")
            } catch {
                #expect(error.code == .duplicateToken && error.message.contains("devices \(first) and \(second)"), "\(error)")
            }
            #expect(try storage.campaign(id: "dup") == nil, "nothing of a refused campaign is written")
        }
        #expect(try storage.insert(campaign, deliveries: (0..<12).map { NewDelivery(token: token($0)) }, now: 1000) == .created(devices: 12, skipped: 0))
    }

    /// Hashes that collide never refuse distinct tokens, and a token whose hash collided is
    /// still found when it is listed again.
    @Test func collidingHashesAreConfirmedAgainstTheTokens() throws {
        var duplicates = DuplicateTokens(hash: { _ in 7 })
        let tokens = (0..<5).map(token) + [token(3)]
        for (index, token) in tokens.enumerated().dropLast() {
            try duplicates.check(token, at: index) { earlier in tokens[earlier] }
        }
        do {
            try duplicates.check(tokens[5], at: 5) { earlier in tokens[earlier] }
            Issue.record("token 3 listed again at 5 was accepted")
        } catch {
            #expect(error.code == .duplicateToken && error.message.contains("devices 3 and 5"), "\(error)")
        }
    }
}
