import APNs
import Foundation
import HTTPServer
import Payloads
import Synchronization
import Storage
import StrictJSON
import Testing
import TestSupport
@testable import Gateway

/// The campaign lifecycle through the HTTP API: schedule, expiry, pause, resume, cancel,
/// the `?state=` filter, every bad input, and a restart in the middle.
@Suite struct LifecycleAPITests {
    static func time(_ offset: Double) -> String { RFC3339.format(Date().timeIntervalSince1970 + offset) }

    func id(_ response: RawResponse?, _ gateway: LiveGateway) throws -> String {
        let response = try #require(response)
        #expect(response.status == 202, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(try gateway.object(response)["id"]?.stringValue)
    }

    func status(_ gateway: LiveGateway, _ id: String) throws -> JSONObject {
        try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)?per_page=1"))
    }

    func sent(_ gateway: LiveGateway) -> Int { gateway.sender.sent.withLock { $0.count } }

    @Test func aScheduledCampaignWaitsForSendAt() async throws {
        let sender = GatedSender(allowed: Int.max)
        let gateway = try LiveGateway(senderOverride: sender)
        let tokens = (0..<3).map { Fixtures.token("5c", $0) }
        // An offset is accepted; times are reported in UTC.
        let at = (Date().timeIntervalSince1970 + 2).rounded(.down)
        var parts = tm()
        var seconds = time_t(at + 3600)
        gmtime_r(&seconds, &parts)
        let offset = String(format: "%04d-%02d-%02dT%02d:%02d:%02d+01:00", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                            parts.tm_hour, parts.tm_min, parts.tm_sec)
        let id = try id(gateway.post(tokens, extra: #","send_at":"\#(offset)""#), gateway)
        let scheduled = try status(gateway, id)
        #expect(scheduled["status"] == .string("scheduled"))
        #expect(scheduled["send_at"]?.stringValue?.hasSuffix("Z") == true)
        let done = try await gateway.waitForCompletion(id)
        #expect(done["counts"]?.objectValue?["delivered"] == .number("3"))
        let times = sender.sentAt.withLock { $0 }
        #expect(times.count == 3)
        #expect(times.allSatisfy { $0 >= at }, "nothing before send_at: \(times) vs \(at)")
    }

    @Test func badSchedulesAre422WithTheirPointer() throws {
        let gateway = try LiveGateway()
        let token = [Fixtures.token("5d", 1)]
        let cases: [(String, String, String)] = [
            (#","send_at":"\#(Self.time(-600))""#, "/send_at", "scheduleInPast"),
            (#","expires_at":"\#(Self.time(-5))""#, "/expires_at", "scheduleInPast"),
            (#","send_at":"\#(Self.time(600))","expires_at":"\#(Self.time(300))""#, "/expires_at", "expiresBeforeSendAt"),
            (#","send_at":"2026-12-01T10:00:00""#, "/send_at", "invalidValue"),
            (#","send_at":1767000000"#, "/send_at", "wrongType"),
            (#","send_at":"\#(Self.time(400 * 86_400))""#, "/send_at", "invalidValue"),
        ]
        for (extra, pointer, code) in cases {
            let response = try #require(gateway.post(token, extra: extra))
            #expect(response.status == 422, "\(extra)")
            let entry = try gateway.object(response)["errors"]?.arrayValue?.first?.objectValue
            #expect(entry?["pointer"] == .string(pointer), "\(extra)")
            #expect(entry?["code"] == .string(code), "\(extra): \(String(decoding: response.body, as: UTF8.self))")
        }
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns"))["campaigns"] == .array([]), "nothing stored")
        // Within the grace a send_at just past is now.
        #expect(gateway.post(token, extra: #","send_at":"\#(Self.time(-10))""#)?.status == 202)
    }

    /// Once `afterSent` sends went through the gate, how many sends were started in all
    /// when the window (4) is claimed again and waits at the gate: at least half of it
    /// more, and nothing after a moment's quiet.
    static func windowWaiting(_ sender: GatedSender, afterSent: Int) async throws -> Int {
        let filled = await eventually(timeout: .seconds(30)) {
            sender.sent == afterSent && sender.started.load(ordering: .relaxed) >= afterSent + 3
        }
        #expect(filled, "\(sender.sent) sent, \(sender.started.load(ordering: .relaxed)) started")
        try await Task.sleep(nanoseconds: 200_000_000)
        let started = sender.started.load(ordering: .relaxed)
        #expect((afterSent + 3...afterSent + 4).contains(started), "\(started) started")
        return started
    }

    @Test func pauseResumeAndCancelThroughTheAPI() async throws {
        let sender = GatedSender(allowed: 8)
        let gateway = try LiveGateway(inFlight: 4, senderOverride: sender)
        let tokens = (0..<50).map { Fixtures.token("9a", $0) }
        let id = try id(gateway.post(tokens), gateway)
        // 8 answered, then the in-flight window claimed again and waiting at APNs: 3 or 4
        // (the dispatcher claims once half the window of 4 is free, so the last free slot
        // may stay free while the others wait).
        let firstWindow = try await Self.windowWaiting(sender, afterSent: 8)
        let paused = try gateway.object(gateway.request("POST", "/v1/campaigns/\(id)/pause"))
        #expect(paused["status"] == .string("paused"))
        // Pausing twice is the same answer.
        let again = gateway.request("POST", "/v1/campaigns/\(id)/pause")
        #expect(again?.status == 200)
        #expect(try gateway.object(again)["status"] == .string("paused"))
        sender.allowed.store(Int.max, ordering: .relaxed)
        _ = await eventually(timeout: .seconds(30)) { sender.sent == firstWindow }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(sender.sent == firstWindow, "only the in-flight window after the pause")
        #expect(try status(gateway, id)["status"] == .string("paused"))

        sender.allowed.store(18, ordering: .relaxed)
        #expect(try gateway.object(gateway.request("POST", "/v1/campaigns/\(id)/resume"))["status"] == .string("sending"))
        let secondWindow = try await Self.windowWaiting(sender, afterSent: 18)
        let cancelled = try gateway.object(gateway.request("POST", "/v1/campaigns/\(id)/cancel"))
        #expect(cancelled["status"] == .string("cancelled"))
        #expect(cancelled["not_sent"]?.int64Value == Int64(50 - secondWindow), "50 - 18 sent - the window in flight")
        sender.allowed.store(Int.max, ordering: .relaxed)
        let finished = try await eventually(timeout: .seconds(30)) {
            try status(gateway, id)["finished_at"] != .null
        }
        #expect(finished)
        try await Task.sleep(nanoseconds: 200_000_000)
        let final = try status(gateway, id)
        #expect(sender.sent == secondWindow, "nothing after the cancel but the in-flight window")
        let counts = try #require(final["counts"]?.objectValue)
        #expect(counts["cancelled"]?.int64Value == Int64(50 - secondWindow) && counts["delivered"]?.int64Value == Int64(secondWindow))
        #expect(final["not_sent"] == counts["cancelled"])
        #expect(final["status"] == .string("cancelled"))

        // Cancel again: nothing changes. Pause or resume a cancelled campaign: 409 with its state.
        let twice = gateway.request("POST", "/v1/campaigns/\(id)/cancel")
        #expect(twice?.status == 200)
        for action in ["pause", "resume"] {
            let refused = try #require(gateway.request("POST", "/v1/campaigns/\(id)/\(action)"))
            #expect(refused.status == 409)
            let problem = try gateway.object(refused)
            #expect(problem["code"] == .string("campaignFinished"))
            #expect(problem["detail"]?.stringValue?.contains("is cancelled") == true)
        }
        #expect(gateway.request("POST", "/v1/campaigns/nope/cancel")?.status == 404)
        #expect(gateway.request("GET", "/v1/campaigns/\(id)/cancel")?.status == 405)
    }

    @Test func cancellingACompletedCampaignIs409NamingItsState() async throws {
        let gateway = try LiveGateway()
        let id = try id(gateway.post([Fixtures.token("7b", 1)]), gateway)
        _ = try await gateway.waitForCompletion(id)
        let refused = try #require(gateway.request("POST", "/v1/campaigns/\(id)/cancel"))
        #expect(refused.status == 409)
        let problem = try gateway.object(refused)
        #expect(problem["code"] == .string("campaignFinished"))
        #expect(problem["detail"] == .string("campaign \(id) is completed; it cannot be cancelled"))
        #expect(problem["errors"]?.arrayValue?.first?.objectValue?["parameter"] == .string("id"))
    }

    @Test func devicesNotSentByExpiresAtEndExpired() async throws {
        let gateway = try LiveGateway(sender: ScriptedSender(delayNanoseconds: 150_000_000), inFlight: 2)
        let tokens = (0..<40).map { Fixtures.token("e0", $0) }
        let id = try id(gateway.post(tokens, extra: #","expires_at":"\#(Self.time(1.5))""#), gateway)
        let finished = try await eventually(timeout: .seconds(30)) { try status(gateway, id)["finished_at"] != .null }
        #expect(finished)
        let final = try status(gateway, id)
        #expect(final["status"] == .string("expired"))
        let counts = try #require(final["counts"]?.objectValue)
        let expired = try #require(counts["expired"]?.int64Value)
        #expect(expired > 0 && Int(expired) == tokens.count - sent(gateway))
        #expect(final["not_sent"]?.int64Value == expired)
        try await Task.sleep(nanoseconds: 400_000_000)
        #expect(Int(expired) == tokens.count - sent(gateway), "nothing sent after the expiry")
    }

    @Test func resultsFilterByStateAndUnknownStatesAre400() async throws {
        let gateway = try LiveGateway()
        let tokens = [Fixtures.token("bad0", 1), Fixtures.token("a1", 2), Fixtures.token("bad0", 3)]
        let id = try id(gateway.post(tokens), gateway)
        _ = try await gateway.waitForCompletion(id)
        let failed = try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)?state=failed"))
        let rows = try #require(failed["results"]?.arrayValue)
        #expect(rows.compactMap { $0.objectValue?["index"]?.int64Value } == [0, 2])
        #expect(rows.allSatisfy { $0.objectValue?["state"] == .string("failed") })
        let both = try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)?state=failed,delivered&per_page=2&page=2"))
        #expect(both["results"]?.arrayValue?.count == 1)
        let bad = try #require(gateway.request("GET", "/v1/campaigns/\(id)?state=failed,sent"))
        #expect(bad.status == 400)
        let problem = try gateway.object(bad)
        #expect(problem["code"] == .string("invalidQuery"))
        let entry = problem["errors"]?.arrayValue?.first?.objectValue
        #expect(entry?["parameter"] == .string("state") && entry?["code"] == .string("invalidValue"))
        #expect(entry?["detail"]?.stringValue?.contains("\"sent\"") == true)
    }

    @Test func pauseAndCancelSurviveARestart() async throws {
        let path = temporaryDatabasePath()
        var pausedID = ""
        var cancelledID = ""
        do {
            let first = try LiveGateway(sender: ScriptedSender(delayNanoseconds: 40_000_000), databasePath: path, inFlight: 2)
            pausedID = try id(first.post((0..<30).map { Fixtures.token("aa", $0) }), first)
            cancelledID = try id(first.post((0..<30).map { Fixtures.token("bb", $0) }), first)
            #expect(first.request("POST", "/v1/campaigns/\(pausedID)/pause")?.status == 200)
            #expect(first.request("POST", "/v1/campaigns/\(cancelledID)/cancel")?.status == 200)
            try await Task.sleep(nanoseconds: 300_000_000)
        }  // stopped here: the server and the dispatcher go with it

        let second = try LiveGateway(databasePath: path)
        try await Task.sleep(nanoseconds: 700_000_000)
        #expect(sent(second) == 0, "the restarted gateway sends nothing of a paused or a cancelled campaign")
        #expect(try status(second, pausedID)["status"] == .string("paused"))
        #expect(try status(second, cancelledID)["status"] == .string("cancelled"))
        #expect(try second.object(second.request("POST", "/v1/campaigns/\(pausedID)/resume"))["status"] == .string("sending"))
        let done = try await second.waitForCompletion(pausedID)
        let counts = try #require(done["counts"]?.objectValue)
        #expect((counts["delivered"]?.int64Value ?? 0) == 30)
        #expect(try status(second, cancelledID)["counts"]?.objectValue?["delivered"]?.int64Value ?? 0 <= 2)
    }
}
