import Foundation
import TestSupport
import Testing
@testable import Storage

/// Segmented campaigns in SQLite (schema 12): intake into segments, claims and records by
/// segment under fenced leases, results merged from codes and exception rows, parts, the
/// corrupt-segment rule and the migration of a schema-11 file.
@Suite struct SegmentStorageTests {
    let prefix = "01234567-89ab-4cde-8f01-"
    let first = LeaseTerms(owner: "gw-1/100/1000.0", seconds: 30)
    let second = LeaseTerms(owner: "gw-2/200/1000.0", seconds: 30)

    func open(_ path: String, segmentSize: Int = 4) throws -> SQLiteCampaignStorage {
        try SQLiteCampaignStorage(path: path, options: .init(synchronousFull: false, segmentSize: segmentSize))
    }

    func delivered(_ c: ClaimedDelivery) -> DeliveryUpdate {
        DeliveryUpdate(campaign: c.campaign, index: c.index, state: .delivered, status: 200,
                       apnsID: CampaignMessage.apnsID(prefix: prefix, index: c.index), lease: c.lease)
    }

    /// How many rows a table of the file has for the campaign.
    func rows(_ path: String, _ table: String, campaign: Int64) throws -> Int {
        let db = try SQLiteDatabase(path: path, readOnly: true)
        let count = try db.statement("SELECT count(*) FROM \(table) WHERE campaign = ?").bind(.int(campaign))
        _ = try count.step()
        return Int(count.int(0))
    }

    @Test func aSegmentedCampaignGoesEndToEndWithRowsOnlyForExceptions() throws {
        let path = temporaryDatabasePath()
        let storage = try open(path)
        _ = try storage.registerToken(token(99), atMilliseconds: 0)
        try storage.record([], now: 0)
        // A dead token: skipped at intake, like today.
        _ = try storage.insert(newCampaign("dead"), deliveries: [NewDelivery(token: token(5))], now: 900)
        let deadClaim = try #require(try storage.claim(limit: 1, now: 900).first)
        try storage.record([DeliveryUpdate(campaign: deadClaim.campaign, index: 0, state: .unregistered, status: 410, reason: "Unregistered",
                                           timestampMilliseconds: 899_000, lease: deadClaim.lease)], now: 901)

        var devices = (0..<10).map { NewDelivery(token: token($0)) }
        devices[7] = NewDelivery(token: token(7), failureReason: "BadPayload")
        #expect(try storage.insert(newCampaign("c1"), deliveries: devices, now: 1000) == .created(devices: 10, skipped: 1))
        let seq = try #require(try storage.campaign(id: "c1")).seq
        #expect(try rows(path, "segment_state", campaign: seq) == 3)
        #expect(try rows(path, "deliveries", campaign: seq) == 2, "the dead token and the unbuildable request")
        #expect(try storage.campaign(id: "c1")?.counts == [.pending: 8, .skipped: 1, .failed: 1])

        let claimed = try storage.claim(limit: 100, now: 1000)
        #expect(claimed.map(\.index) == [0, 1, 2, 3, 4, 6, 8, 9])
        #expect(claimed.map(\.token) == [0, 1, 2, 3, 4, 6, 8, 9].map(token))
        #expect(claimed.allSatisfy { $0.attempt == 1 && $0.lease == 1 })
        #expect(try storage.campaign(id: "c1")?.counts[.inFlight] == 8)
        let byIndex = Dictionary(uniqueKeysWithValues: claimed.map { ($0.index, $0) })
        var other = delivered(byIndex[1]!)
        other.apnsID = "other-id"
        var sandbox = delivered(byIndex[2]!)
        sandbox.apnsUniqueID = "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7d"
        var givenBack = DeliveryUpdate(campaign: seq, index: 8, state: .pending, reason: "keyStopped", nextAttemptAt: 1000, lease: byIndex[8]!.lease)
        givenBack.refundAttempt = true
        let updates = [
            delivered(byIndex[0]!), other, sandbox,
            DeliveryUpdate(campaign: seq, index: 3, state: .failed, status: 400, reason: "BadDeviceToken", lease: byIndex[3]!.lease),
            DeliveryUpdate(campaign: seq, index: 4, state: .unregistered, status: 410, reason: "Unregistered", timestampMilliseconds: 1_000_500, lease: byIndex[4]!.lease),
            DeliveryUpdate(campaign: seq, index: 6, state: .retrying, status: 429, reason: "TooManyRequests", nextAttemptAt: 1005, lease: byIndex[6]!.lease),
            givenBack, delivered(byIndex[9]!),
        ]
        #expect(try storage.record(updates, now: 1001) == 8)
        #expect(try storage.record(updates, now: 1001) == 0, "a duplicate records nothing")
        // Exception rows: the two from intake, and 1, 2, 3, 4, 6, 8; 0 and 9 are codes.
        #expect(try rows(path, "deliveries", campaign: seq) == 8)
        #expect(try storage.campaign(id: "c1")?.counts == [.delivered: 4, .failed: 2, .unregistered: 1, .skipped: 1, .retrying: 1, .pending: 1, .inFlight: 0])
        #expect(try storage.deadTokens(sinceMilliseconds: 0, after: nil, limit: 10).map(\.token).contains(token(4)))

        // The given-back device comes back at once, the retry when it is due.
        let back = try storage.claim(limit: 100, now: 1002)
        #expect(back.map(\.index) == [8] && back[0].token == token(8) && back[0].attempt == 1)
        let retry = try storage.claim(limit: 100, now: 1005)
        #expect(retry.map(\.index) == [6] && retry[0].attempt == 2)
        try storage.record([delivered(back[0]), delivered(retry[0])], now: 1006)
        let summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.finishedAt == 1006)
        #expect(summary.counts == [.delivered: 6, .failed: 2, .unregistered: 1, .skipped: 1, .retrying: 0, .pending: 0, .inFlight: 0])
        #expect(try rows(path, "segment_state", campaign: seq) == 3)
        let open = try SQLiteDatabase(path: path, readOnly: true).statement("SELECT count(*) FROM segment_state WHERE open = 1")
        _ = try open.step()
        #expect(open.int(0) == 0, "every segment settled")

        let results = try storage.results(campaign: seq, offset: 0, limit: 100)
        #expect(results.map(\.index) == Array(0..<10))
        #expect(results.map(\.token) == (0..<10).map(token))
        #expect(results.map(\.state) == [.delivered, .delivered, .delivered, .failed, .unregistered, .skipped, .delivered, .failed, .delivered, .delivered])
        #expect(results[0] == DeliveryResultRow(index: 0, token: token(0), state: .delivered, attempts: 1, status: 200, reason: nil,
                                               apnsID: prefix + "000000000000", timestampMilliseconds: nil, nextAttemptAt: nil))
        #expect(results[1].apnsID == "other-id" && results[2].apnsUniqueID == "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7d")
        #expect(results[4].timestampMilliseconds == 1_000_500 && results[5].reason == "Unregistered" && results[7].reason == "BadPayload")
        #expect(results[6].attempts == 2 && results[8].attempts == 1, "the given-back attempt is not counted")
        // Pages: by first index, and filtered pages counting past earlier matches.
        #expect(try storage.results(campaign: seq, offset: 3, limit: 3).map(\.index) == [3, 4, 5])
        #expect(try storage.results(campaign: seq, states: [.delivered], offset: 2, limit: 3).map(\.index) == [2, 6, 8])
        #expect(try storage.results(campaign: seq, states: [.failed, .skipped], offset: 0, limit: 10).map(\.index) == [3, 5, 7])
        #expect(try storage.reasonCounts(campaign: seq, states: [.failed]).map(\.reason) == ["BadDeviceToken", "BadPayload"])

        // Retention removes the segments with the rows.
        var purged = PurgeProgress()
        repeat { purged = try storage.purgeFinished(before: 2000, limit: 3) } while purged.more
        #expect(try storage.campaign(id: "c1") == nil)
        #expect(try rows(path, "segment_state", campaign: seq) == 0 && rows(path, "segments", campaign: seq) == 0)
    }

    @Test func aLateHolderWhoseLeaseWasTakenOverRecordsNothingAndTheTakerSendsOnlyUncodedDevices() throws {
        let storage = try open(temporaryDatabasePath(), segmentSize: 8)
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<6).map { NewDelivery(token: token($0)) }, now: 1000)
        let mine = try storage.claim(limit: 4, lease: first, now: 1000)
        #expect(mine.map(\.index) == [0, 1, 2, 3])
        try storage.record([delivered(mine[0]), delivered(mine[1])], now: 1001)
        #expect(try storage.claim(limit: 10, lease: second, now: 1029).isEmpty, "held by gw-1")
        // gw-1 hangs past its lease: gw-2 takes the segment over.
        let taken = try storage.claim(limit: 10, lease: second, now: 1031)
        #expect(taken.map(\.index) == [2, 3, 4, 5], "coded devices are not sent again")
        #expect(taken.map(\.attempt) == [2, 2, 1, 1])
        #expect(taken.allSatisfy { $0.lease == mine[0].lease + 1 })
        #expect(try storage.campaign(id: "c1")?.counts[.inFlight] == 4, "a takeover moves nothing between states")
        // The late holder's answers, success and failure alike, record nothing.
        let late = [delivered(mine[2]), DeliveryUpdate(campaign: mine[3].campaign, index: 3, state: .failed, status: 400, reason: "BadDeviceToken", lease: mine[3].lease)]
        #expect(try storage.record(late, now: 1032) == 0)
        #expect(try storage.renewLeases(first, now: 1032) == 0, "gw-1 holds nothing any more")
        #expect(try storage.record(taken.map(delivered), now: 1033) == 4)
        let summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.counts[.delivered] == 6 && summary.counts[.failed, default: 0] == 0 && summary.finishedAt == 1033)
    }

    @Test func aCrashResendsAtMostWhatWasClaimedAndNotRecorded() throws {
        let path = temporaryDatabasePath()
        var sends: [Int: Int] = [:]
        do {
            let storage = try open(path)
            _ = try storage.insert(newCampaign("c1"), deliveries: (0..<10).map { NewDelivery(token: token($0)) }, now: 1000)
            let claimed = try storage.claim(limit: 6, now: 1000)
            for c in claimed { sends[c.index, default: 0] += 1 }
            try storage.record(claimed.prefix(3).map(delivered), now: 1001)
            // The process dies here: 3 claimed and not recorded.
        }
        let storage = try open(path)
        #expect(try storage.requeueInFlight() == 3)
        let counts = try #require(try storage.campaign(id: "c1")).counts
        #expect(counts[.inFlight, default: 0] == 0 && counts[.pending] == 7 && counts[.delivered] == 3)
        while true {
            let claimed = try storage.claim(limit: 4, now: 1002)
            if claimed.isEmpty { break }
            for c in claimed { sends[c.index, default: 0] += 1 }
            try storage.record(claimed.map(delivered), now: 1002)
        }
        #expect(sends.keys.sorted() == Array(0..<10))
        #expect(sends.values.reduce(0, +) - 10 == 3, "sent twice: only the 3 claimed and not recorded")
        #expect(try storage.campaign(id: "c1")?.finishedAt == 1002)
    }

    @Test func cancelAndPauseMidSegmentSendNothingNew() throws {
        let storage = try open(temporaryDatabasePath(), segmentSize: 8)
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<12).map { NewDelivery(token: token($0)) }, now: 1000)
        let seq = try #require(try storage.campaign(id: "c1")).seq
        let before = try storage.claim(limit: 3, now: 1000)
        #expect(try storage.changeLifecycle(id: "c1", .pause, now: 1001).isChanged)
        #expect(try storage.claim(limit: 100, now: 1001).isEmpty, "paused")
        #expect(try storage.changeLifecycle(id: "c1", .resume, now: 1002).isChanged)
        let resumed = try storage.claim(limit: 2, now: 1002)
        #expect(resumed.map(\.index) == [3, 4])
        #expect(try storage.changeLifecycle(id: "c1", .cancel, now: 1003).isChanged)
        #expect(try storage.claim(limit: 100, now: 1003).isEmpty, "cancelled")
        // The 7 not handed out end cancelled at once; the 5 in flight finish as they come back.
        #expect(try storage.closeStopped(now: 1003, limit: 100) == 7)
        #expect(try storage.campaign(id: "c1")?.finishedAt == nil)
        #expect(try storage.record((before + resumed).map(delivered), now: 1004) == 5)
        let summary = try #require(try storage.campaign(id: "c1"))
        #expect(summary.counts[.delivered] == 5 && summary.counts[.cancelled] == 7 && summary.finishedAt == 1004)
        #expect(try storage.results(campaign: seq, states: [.cancelled], offset: 0, limit: 100).map(\.index) == Array(5..<12))
    }

    @Test func aCorruptSegmentFailsOnlyItsCampaignAndSendsNoGuessedToken() throws {
        let path = temporaryDatabasePath()
        let storage = try open(path)
        _ = try storage.insert(newCampaign("bad"), deliveries: (0..<8).map { NewDelivery(token: token($0)) }, now: 1000)
        let bad = try #require(try storage.campaign(id: "bad")).seq
        let early = try storage.claim(limit: 2, now: 1000)
        try storage.record(early.map(delivered), now: 1000)
        _ = try storage.insert(newCampaign("good"), deliveries: (100..<106).map { NewDelivery(token: token($0)) }, now: 1001)
        // One byte of the bad campaign's second segment flipped on disk.
        do {
            let db = try SQLiteDatabase(path: path)
            let read = try db.statement("SELECT tokens FROM segments WHERE campaign = ? AND seg = 1").bind(.int(bad))
            _ = try read.step()
            var tokens = read.blob(0)
            read.reset()
            tokens[5] ^= 0x01
            try db.statement("UPDATE segments SET tokens = ? WHERE campaign = ? AND seg = 1").bind(.blob(tokens), .int(bad)).run()
        }
        let claimed = try storage.claim(limit: 100, now: 1002)
        #expect(!claimed.isEmpty && claimed.allSatisfy { $0.campaign != bad }, "nothing of the failed campaign is sent")
        #expect(Set(claimed.map(\.token)).isSubset(of: Set((100..<106).map(token))))
        let failed = try #require(try storage.campaign(id: "bad"))
        #expect(failed.failure?.contains("segment 1 of campaign \(bad) does not decode: checksum mismatch") == true)
        #expect(failed.finishedAt == 1002 && failed.counts[.delivered] == 2 && failed.counts[.failed] == 6)
        #expect(failed.counts[.pending, default: 0] == 0 && failed.counts[.inFlight, default: 0] == 0)
        #expect(try storage.pendingCampaignEvents(limit: 10).map(\.campaign.id) == ["bad"])
        let results = try storage.results(campaign: bad, offset: 0, limit: 10)
        #expect(results.map(\.state) == [.delivered, .delivered] + Array(repeating: .failed, count: 6))
        #expect(results[2].reason == "segmentCorrupt" && results[2].token == token(2), "a segment that decodes keeps its tokens")
        #expect(results[4].token == "", "a token that cannot be read is not guessed")
        #expect(try storage.reasonCounts(campaign: bad, states: [.failed]) == [ReasonCount(state: .failed, reason: "segmentCorrupt", count: 6)])
        #expect(try storage.failedCampaigns(since: 1002, limit: 10).map(\.id) == ["bad"])
        #expect(try storage.failedCampaigns(since: 1003, limit: 10).isEmpty)
        // The other campaign goes on to the end.
        var left = claimed
        while !left.isEmpty {
            try storage.record(left.map(delivered), now: 1003)
            left = try storage.claim(limit: 100, now: 1003)
        }
        #expect(try storage.campaign(id: "good")?.counts[.delivered] == 6)
        #expect(try storage.campaign(id: "good")?.failure == nil)
    }

    @Test func aCampaignFilledInPartsIsIdempotentPerPartAndSentOnlyOnceStarted() throws {
        let storage = try open(temporaryDatabasePath())
        var campaign = newCampaign("big")
        campaign.filling = true
        #expect(try storage.insert(campaign, deliveries: [], now: 1000) == .created(devices: 0, skipped: 0))
        #expect(try storage.campaign(id: "big")?.status(at: 1000) == .filling)
        #expect(try storage.claim(limit: 10, now: 1000).isEmpty)
        #expect(try storage.nextDueTime(now: 1000) == nil)
        #expect(throws: StorageError.self) { try storage.finishFilling(campaign: "big", expectedDevices: nil, transactionalMaxDevices: 100, now: 1000) }

        let one = (0..<3).map { NewDelivery(token: token($0)) }
        #expect(try storage.appendDevices(campaign: "big", part: 1, requestSHA256: "h1", deliveries: one, now: 1001)
                == .appended(PartReceipt(part: 1, firstIndex: 0, devices: 3, skipped: 0)))
        // Part 2 continues the partial segment; part 3 crosses into the next.
        #expect(try storage.appendDevices(campaign: "big", part: 2, requestSHA256: "h2", deliveries: (3..<6).map { NewDelivery(token: token($0)) }, now: 1002)
                == .appended(PartReceipt(part: 2, firstIndex: 3, devices: 3, skipped: 0)))
        #expect(try storage.appendDevices(campaign: "big", part: 1, requestSHA256: "h1", deliveries: one, now: 1003)
                == .alreadyAppended(PartReceipt(part: 1, firstIndex: 0, devices: 3, skipped: 0)))
        #expect(try storage.campaign(id: "big")?.devices == 6, "a part sent again adds nothing")
        do {
            _ = try storage.appendDevices(campaign: "big", part: 1, requestSHA256: "other", deliveries: one, now: 1003)
            Issue.record("a part with other content is refused")
        } catch { #expect(error.code == .partConflict) }
        do {
            _ = try storage.appendDevices(campaign: "nope", part: 1, requestSHA256: "h1", deliveries: one, now: 1003)
            Issue.record("no such campaign")
        } catch { #expect(error.code == .campaignNotFound) }
        #expect(try storage.claim(limit: 10, now: 1003).isEmpty, "not sent while filling")

        guard case .started(let started) = try storage.finishFilling(campaign: "big", expectedDevices: nil, transactionalMaxDevices: 100, now: 1004) else {
            Issue.record("not started")
            return
        }
        #expect(started.status(at: 1004) == .sending && started.devices == 6 && started.lane == .transactional)
        guard case .unchanged = try storage.finishFilling(campaign: "big", expectedDevices: nil, transactionalMaxDevices: 100, now: 1005) else {
            Issue.record("started twice")
            return
        }
        do {
            _ = try storage.appendDevices(campaign: "big", part: 3, requestSHA256: "h3", deliveries: one, now: 1005)
            Issue.record("a started campaign takes no more parts")
        } catch { #expect(error.code == .notFilling) }
        let claimed = try storage.claim(limit: 100, now: 1005)
        #expect(claimed.map(\.index) == Array(0..<6) && claimed.map(\.token) == (0..<6).map(token))
        try storage.record(claimed.map(delivered), now: 1006)
        #expect(try storage.campaign(id: "big")?.finishedAt == 1006)
    }

    @Test func aCampaignCancelledWhileFillingFinishesAndTakesNoMoreParts() throws {
        let storage = try open(temporaryDatabasePath())
        var campaign = newCampaign("big")
        campaign.filling = true
        _ = try storage.insert(campaign, deliveries: [], now: 1000)
        _ = try storage.appendDevices(campaign: "big", part: 1, requestSHA256: "h1", deliveries: (0..<6).map { NewDelivery(token: token($0)) }, now: 1001)
        #expect(try storage.changeLifecycle(id: "big", .cancel, now: 1002).isChanged)
        #expect(try storage.closeStopped(now: 1002, limit: 100) == 6)
        let summary = try #require(try storage.campaign(id: "big"))
        #expect(summary.counts[.cancelled] == 6 && summary.finishedAt == 1002 && summary.status(at: 1002) == .cancelled)
        for attempt in [{ _ = try storage.appendDevices(campaign: "big", part: 2, requestSHA256: "h2", deliveries: [NewDelivery(token: token(9))], now: 1003) },
                        { _ = try storage.finishFilling(campaign: "big", expectedDevices: nil, transactionalMaxDevices: 100, now: 1003) }] {
            do {
                try attempt()
                Issue.record("a cancelled campaign is neither filled nor started")
            } catch let error as StorageError { #expect(error.code == .notFilling) }
        }
        // An empty one cancelled while filling finishes too.
        var empty = newCampaign("empty")
        empty.filling = true
        _ = try storage.insert(empty, deliveries: [], now: 1004)
        _ = try storage.changeLifecycle(id: "empty", .cancel, now: 1005)
        _ = try storage.closeStopped(now: 1005, limit: 100)
        #expect(try storage.campaign(id: "empty")?.finishedAt == 1005)
    }

    @Test func aDeliveredAnswerWithTheDerivedIdInCapitalsIsACodeAndAnyOtherIdARow() throws {
        let path = temporaryDatabasePath()
        let storage = try open(path)
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<3).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try storage.claim(limit: 3, now: 1000)
        var upper = delivered(claimed[0])
        upper.apnsID = upper.apnsID?.uppercased()
        var none = delivered(claimed[1])
        none.apnsID = nil
        var other = delivered(claimed[2])
        other.apnsID = prefix + "00000000000f"
        #expect(try storage.record([upper, none, other], now: 1001) == 3)
        #expect(try rows(path, "deliveries", campaign: claimed[0].campaign) == 2)
        let results = try storage.results(campaign: claimed[0].campaign, offset: 0, limit: 3)
        #expect(results.map(\.apnsID) == [prefix + "000000000000", nil, prefix + "00000000000f"])
    }

    @Test func pagesOfAnUnfinishedCampaignReadPendingAndInFlightFromTheSegments() throws {
        let storage = try open(temporaryDatabasePath())
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<10).map { NewDelivery(token: token($0)) }, now: 1000)
        let claimed = try storage.claim(limit: 3, now: 1000)
        let seq = claimed[0].campaign
        #expect(try storage.results(campaign: seq, states: [.inFlight], offset: 0, limit: 10).map(\.index) == [0, 1, 2])
        #expect(try storage.results(campaign: seq, states: [.pending], offset: 2, limit: 3).map(\.index) == [5, 6, 7])
        #expect(try storage.results(campaign: seq, states: [.pending], offset: 6, limit: 3).map(\.index) == [9])
        #expect(try storage.results(campaign: seq, offset: 8, limit: 5).map(\.token) == [token(8), token(9)])
        let page = try storage.results(campaign: seq, offset: 2, limit: 2)
        #expect(page.map(\.state) == [.inFlight, .pending] && page.map(\.attempts) == [1, 0])
        #expect(try storage.results(campaign: seq, states: [.delivered, .failed], offset: 0, limit: 10).isEmpty)
    }

    @Test func duplicateTokensAreFoundAcrossSegmentsAndNothingIsWritten() throws {
        let storage = try open(temporaryDatabasePath())
        var campaign = newCampaign("dup")
        campaign.rejectDuplicateTokens = true
        let devices = (0..<9).map { NewDelivery(token: token($0 == 7 ? 2 : $0)) }
        do {
            _ = try storage.insert(campaign, deliveries: devices, now: 1000)
            Issue.record("a duplicate is refused")
        } catch {
            #expect(error.code == .duplicateToken && error.message.contains("devices 2 and 7"))
        }
        #expect(try storage.campaign(id: "dup") == nil)
        #expect(try storage.insert(campaign, deliveries: (0..<9).map { NewDelivery(token: token($0)) }, now: 1000) == .created(devices: 9, skipped: 0))
    }

    @Test func anOpenSegmentIsDueNowAndOneHandedOutInFullIsNot() throws {
        let storage = try open(temporaryDatabasePath())
        _ = try storage.insert(newCampaign("c1"), deliveries: (0..<4).map { NewDelivery(token: token($0)) }, now: 1000)
        #expect(try storage.nextDueTime(now: 1000) == 1000)
        _ = try storage.claim(limit: 4, now: 1000)
        #expect(try storage.nextDueTime(now: 1001) == 1030, "nothing to hand out before the lease expires")
    }

    /// The golden: the finished campaign of `Fixtures/schema11.sqlite` (every kind of
    /// outcome, written a row per device by main before segments) sent again through
    /// segments reads exactly the same, row for row.
    @Test func aSegmentedCampaignReadsTheSameAsTheRowsOfTheReleaseBefore() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let golden = try String(contentsOf: fixtures.appendingPathComponent("schema11-finished-results.txt"), encoding: .utf8)
        let storage = try open(temporaryDatabasePath(), segmentSize: 3)
        _ = try storage.insert(newCampaign("finished"), deliveries: (0..<6).map { NewDelivery(token: token($0)) }
                               + [NewDelivery(token: token(6), failureReason: "BadPayload")], now: 1000)
        let claimed = try storage.claim(limit: 6, now: 1000)
        let seq = claimed[0].campaign
        var unique = DeliveryUpdate(campaign: seq, index: 3, state: .delivered, status: 200, apnsID: prefix + "000000000003", lease: claimed[3].lease)
        unique.apnsUniqueID = "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a7d"
        try storage.record([
            DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: prefix + "000000000000", lease: claimed[0].lease),
            DeliveryUpdate(campaign: seq, index: 1, state: .failed, status: 400, reason: "BadDeviceToken", apnsID: prefix + "000000000001", lease: claimed[1].lease),
            DeliveryUpdate(campaign: seq, index: 2, state: .unregistered, status: 410, reason: "Unregistered", timestampMilliseconds: 999_000, lease: claimed[2].lease),
            unique,
            DeliveryUpdate(campaign: seq, index: 4, state: .delivered, status: 200, apnsID: prefix + "000000000004", lease: claimed[4].lease),
            DeliveryUpdate(campaign: seq, index: 5, state: .failed, status: 400, reason: "DeviceTokenNotForTopic", lease: claimed[5].lease),
        ], now: 1001)
        #expect(try storage.results(campaign: seq, offset: 0, limit: 100).map { "\($0)" }.joined(separator: "\n") == golden)
        // Delivered 0 and 4 are codes; everything else has its row.
        let db = try SQLiteDatabase(path: storage.path, readOnly: true)
        let count = try db.statement("SELECT count(*) FROM deliveries WHERE campaign = ?").bind(.int(seq))
        _ = try count.step()
        #expect(count.int(0) == 5)
    }

    /// A database written by the release before segments (schema 11, `Fixtures/schema11.sqlite`):
    /// a finished campaign with every kind of outcome, and one with devices delivered,
    /// retrying, in flight and pending.
    @Test func aSchema11FileMigratesItsUnfinishedCampaignCompletesAndFinishedResultsReadTheSame() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let path = temporaryDatabasePath()
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("schema11.sqlite"), to: URL(fileURLWithPath: path))
        let before = try String(contentsOf: fixtures.appendingPathComponent("schema11-finished-results.txt"), encoding: .utf8)
        let storage = try open(path)
        #expect(try storage.schemaVersion() == Schema.currentVersion)
        let finished = try #require(try storage.campaign(id: "finished"))
        #expect(try storage.results(campaign: finished.seq, offset: 0, limit: 100).map { "\($0)" }.joined(separator: "\n") == before)
        #expect(finished.counts[.delivered] == 3 && finished.counts[.failed] == 3 && finished.counts[.unregistered] == 1)

        let open = try #require(try storage.campaign(id: "unfinished"))
        #expect(try storage.requeueInFlight() == 1, "the one left in flight")
        var sent: [Int] = []
        var now = 1010.0
        while try storage.campaign(id: "unfinished")?.finishedAt == nil && now < 1020 {
            let claimed = try storage.claim(limit: 3, now: now)
            #expect(claimed.allSatisfy { $0.campaign == open.seq })
            sent += claimed.map(\.index)
            try storage.record(claimed.map(delivered), now: now)
            now += 1
        }
        #expect(sent.sorted() == Array(1..<8))
        let done = try #require(try storage.campaign(id: "unfinished"))
        #expect(done.counts[.delivered] == 8 && done.finishedAt != nil)
        #expect(try storage.results(campaign: open.seq, offset: 0, limit: 100).map(\.state) == Array(repeating: .delivered, count: 8))
        // New campaigns in the migrated file are segmented.
        _ = try storage.insert(newCampaign("new"), deliveries: (20..<25).map { NewDelivery(token: token($0)) }, now: 1030)
        let fresh = try #require(try storage.campaign(id: "new")).seq
        #expect(try rows(path, "segment_state", campaign: fresh) == 2 && rows(path, "deliveries", campaign: fresh) == 0)
    }
}

extension LifecycleOutcome {
    var isChanged: Bool {
        if case .changed = self { return true }
        return false
    }
}
