import Foundation
import HTTPServer
import Payloads
import Storage
import StrictJSON
import Testing
import TestSupport
@testable import Gateway

extension LiveGateway {
    static let partsCampaign = #"{"alert":{"title":"Hi","body":"Sale"},"deeplink":"https://example.com/product/42"}"#

    /// `POST /v1/campaigns?parts=true`: the new campaign's id (the answer must be 201).
    func createInParts(_ campaign: String = LiveGateway.partsCampaign, headers: [(String, String)] = []) throws -> String {
        let response = try #require(request("POST", "/v1/campaigns?parts=true", json: campaign, headers: headers))
        #expect(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
        let created = try object(response)
        #expect(created["status"] == .string("filling"))
        let id = try #require(created["id"]?.stringValue)
        #expect(response.header("location") == "/v1/campaigns/" + id)
        return id
    }

    func putPart(_ id: String, _ part: Int, _ lines: [String], headers: [(String, String)] = []) -> RawResponse? {
        putPart(id, String(part), body: lines.map { $0 + "\n" }.joined(), headers: headers)
    }

    func putPart(_ id: String, _ part: String, body: String, contentType: String = "application/x-ndjson",
                 headers: [(String, String)] = []) -> RawResponse? {
        RawHTTPClient.exchange(port: port, method: "PUT", path: "/v1/campaigns/\(id)/parts/\(part)",
                               headers: headers + [("Content-Type", contentType)], body: Array(body.utf8))
    }

    func start(_ id: String, confirm: Int? = nil, headers: [(String, String)] = []) -> RawResponse? {
        request("POST", "/v1/campaigns/\(id)/start", json: confirm.map { #"{"confirm_devices":\#($0)}"# }, headers: headers)
    }

    /// A problem's `code` and its first entry's `code` and location.
    func problem(_ response: RawResponse?) throws -> (code: String?, entry: JSONObject?) {
        let response = try #require(response)
        #expect(response.header("content-type") == "application/problem+json")
        let problem = try object(response)
        return (problem["code"]?.stringValue, problem["errors"]?.arrayValue?.first?.objectValue)
    }
}

/// A campaign filled in parts: created without devices, given them part by part (each
/// idempotent), sent only once started, with the send guard's confirmation at the start.
@Suite struct CampaignPartsTests {
    /// A filling campaign of `devices` as the gateway reads it before the start.
    func filling(_ devices: Int) -> CampaignSummary {
        var summary = CampaignSummary(seq: 1, id: "c", createdAt: 1000, dryRun: false, devices: devices, finishedAt: nil, counts: [.pending: devices])
        summary.filling = true
        return summary
    }

    /// The start as storage answers it: `devicesChanged` to each count of `moves` in turn
    /// (a part stored between the guard's read and the start), then started. The counts
    /// the gateway asked to start with are recorded.
    func start(_ first: Int, confirmed: Int?, confirmAbove: Int, moves: [Int]) throws -> (Result<CampaignSummary, Problem>, [Int?]) {
        var asked: [Int?] = []
        var moves = moves[...]
        let outcome = Result { () throws(Problem) in
            try CampaignPartEndpoints.guardedStart(filling(first), confirmed: confirmed, sendGuard: SendGuard(confirmAbove: confirmAbove),
                                                   now: 1001) { expected throws(Problem) -> FillOutcome in
                asked.append(expected)
                if let next = moves.popFirst() { return .devicesChanged(filling(next)) }
                var started = filling(expected ?? 0)
                started.filling = false
                return .started(started)
            }
        }
        return (outcome, asked)
    }

    @Test func aConfirmedStartWhoseCountMovedIsRefusedWithTheNewCount() throws {
        let (outcome, asked) = try start(5, confirmed: 5, confirmAbove: 3, moves: [7])
        #expect(asked == [5], "started only with the count confirmed")
        guard case .failure(let problem) = outcome else { Issue.record("started with a count nobody confirmed"); return }
        #expect(problem.status == 422 && problem.code == .confirmationRequired)
        #expect(problem.errors.first?.message == "confirm_devices is 5 but the campaign has 7 devices; nothing was sent")
    }

    @Test func anUnconfirmedStartWhoseCountMovedPastTheGuardIsRefused() throws {
        let (outcome, asked) = try start(3, confirmed: nil, confirmAbove: 5, moves: [8])
        #expect(asked == [3])
        guard case .failure(let problem) = outcome else { Issue.record("started past the guard"); return }
        #expect(problem.status == 422 && problem.code == .confirmationRequired)
        #expect(problem.errors.first?.message.contains("\"confirm_devices\": 8") == true)
    }

    @Test func anUnconfirmedStartWhoseCountMovedWithinTheGuardStartsWithTheNewCount() throws {
        let (outcome, asked) = try start(3, confirmed: nil, confirmAbove: 5, moves: [4])
        #expect(asked == [3, 4])
        guard case .success(let started) = outcome else { Issue.record("not started"); return }
        #expect(started.devices == 4 && !started.filling)
    }

    @Test func aCountThatKeepsMovingGivesUpAfterAFewChecks() throws {
        let (outcome, asked) = try start(1, confirmed: nil, confirmAbove: 100, moves: [2, 3, 4, 5])
        #expect(asked == [1, 2, 3])
        guard case .failure(let problem) = outcome else { Issue.record("started"); return }
        #expect(problem.status == 422 && problem.code == .confirmationRequired)
        #expect(problem.errors.first?.message.contains("got more devices while it was being started (4 now)") == true)
    }

    @Test func partsInAnyOrderRepeatedOrNotAreSentOnceEachAfterTheStart() async throws {
        let gateway = try LiveGateway()
        let id = try gateway.createInParts()
        let second = (0..<3).map { Fixtures.token("b", $0) }
        let first = (0..<2).map { Fixtures.token("a", $0) }

        // Part 2 first: a part's devices take the next indices in the order parts arrive.
        let two = try #require(gateway.putPart(id, 2, second))
        #expect(two.status == 201)
        let receipt = try gateway.object(two)
        #expect(receipt["part"] == .number("2") && receipt["first_index"] == .number("0") && receipt["devices"] == .number("3"))
        #expect(receipt["skipped"] == .number("0") && receipt["replayed"] == .bool(false))
        let one = try gateway.object(gateway.putPart(id, 1, first))
        #expect(one["first_index"] == .number("3") && one["devices"] == .number("2"))

        // The same part again: the same receipt, nothing stored twice.
        let again = try #require(gateway.putPart(id, 2, second))
        #expect(again.status == 200)
        #expect(again.header("idempotent-replayed") == "true")
        let replayed = try gateway.object(again)
        #expect(replayed["first_index"] == .number("0") && replayed["devices"] == .number("3") && replayed["replayed"] == .bool(true))
        // Other devices under a part number already used: refused, the first body stays.
        let conflict = try #require(gateway.putPart(id, 2, [Fixtures.token("c", 1)]))
        #expect(conflict.status == 409)
        let (code, entry) = try gateway.problem(conflict)
        #expect(code == "partConflict" && entry?["code"] == .string("partConflict") && entry?["parameter"] == .string("part"))

        // Filling: counted, listed, nothing sent.
        let filling = try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)"))
        #expect(filling["status"] == .string("filling") && filling["devices"] == .number("5"))
        let listed = try gateway.object(gateway.request("GET", "/v1/campaigns?status=filling"))
        #expect(listed["campaigns"]?.arrayValue?.count == 1)
        // (A filling campaign's devices count in the queue depth, so the dispatcher is not
        // idle: it is given time to claim, which it must not.)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(gateway.sender.sent.withLock { $0.isEmpty })

        let started = try #require(gateway.start(id))
        #expect(started.status == 200)
        #expect(try gateway.object(started)["status"] == .string("sending"))
        let done = try await gateway.waitForCompletion(id)
        #expect(done["counts"]?.objectValue?["delivered"] == .number("5"))
        let tokens = done["results"]?.arrayValue?.compactMap { $0.objectValue?["token"]?.stringValue }
        #expect(tokens == second + first, "index order is the order the parts arrived")
        #expect(gateway.sender.sent.withLock { $0.sorted() } == (first + second).sorted(), "each device sent once")

        // After the start: no more parts; a second start changes nothing.
        let late = try #require(gateway.putPart(id, 3, [Fixtures.token("d", 1)]))
        #expect(late.status == 409)
        #expect(try gateway.problem(late).code == "notFilling")
        let restart = try #require(gateway.start(id))
        #expect(restart.status == 200)
        #expect(try gateway.object(restart)["status"] == .string("completed"))
    }

    @Test func theGuardWantsTheDeviceCountAtTheStart() async throws {
        let gateway = try LiveGateway(confirmAbove: 3)
        let id = try gateway.createInParts()
        _ = gateway.putPart(id, 1, (0..<3).map { Fixtures.token("a", $0) })
        _ = gateway.putPart(id, 2, (0..<2).map { Fixtures.token("b", $0) })
        let unconfirmed = try #require(gateway.start(id))
        #expect(unconfirmed.status == 422)
        let (code, entry) = try gateway.problem(unconfirmed)
        #expect(code == "confirmationRequired" && entry?["pointer"] == .string("/confirm_devices"))
        #expect(entry?["detail"]?.stringValue?.contains("\"confirm_devices\": 5") == true)
        let wrong = try #require(gateway.start(id, confirm: 4))
        #expect(wrong.status == 422)
        #expect(try gateway.problem(wrong).code == "confirmationRequired")
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)"))["status"] == .string("filling"))
        #expect(gateway.sender.sent.withLock { $0.isEmpty })

        let confirmed = try #require(gateway.start(id, confirm: 5))
        #expect(confirmed.status == 200)
        let done = try await gateway.waitForCompletion(id)
        #expect(done["counts"]?.objectValue?["delivered"] == .number("5"))
    }

    @Test func aBadPartIsRefusedWithWhereAndWhyAndStoresNothing() throws {
        let gateway = try LiveGateway(maxBodyBytes: 4096)
        let id = try gateway.createInParts()
        let good = Fixtures.token("a", 1)

        let invalid = try #require(gateway.putPart(id, "1", body: "\(good)\n\n# a comment\nxyz\n"))
        #expect(invalid.status == 422)
        var (code, entry) = try gateway.problem(invalid)
        #expect(code == "validationFailed" && entry?["code"] == .string("invalidToken") && entry?["line"] == .number("4"))

        let duplicate = try #require(gateway.putPart(id, "1", body: "\(good)\n\(Fixtures.token("a", 2))\n\(good.uppercased())\n"))
        #expect(duplicate.status == 422)
        (code, entry) = try gateway.problem(duplicate)
        #expect(entry?["code"] == .string("duplicateDevice") && entry?["line"] == .number("3"))
        #expect(entry?["detail"]?.stringValue?.contains("line 1") == true)

        let empty = try #require(gateway.putPart(id, "1", body: "\n# nothing\n"))
        #expect(empty.status == 422)
        #expect(try gateway.problem(empty).entry?["code"] == .string("noDevices"))

        for part in ["0", "1000001", "x", "01a", "-1"] {
            let response = try #require(gateway.putPart(id, part, body: good + "\n"))
            #expect(response.status == 422, "\(part)")
            (code, entry) = try gateway.problem(response)
            #expect(entry?["code"] == .string("invalidValue") && entry?["parameter"] == .string("part"), "\(part)")
        }
        let json = try #require(gateway.putPart(id, "1", body: #"{"devices":["\#(good)"]}"#, contentType: "application/json"))
        #expect(json.status == 415)
        let tooBig = try #require(gateway.putPart(id, 1, (0..<100).map { Fixtures.token("a", $0) }))
        #expect(tooBig.status == 413)
        #expect(try gateway.problem(tooBig).code == "bodyTooLarge")
        let unknown = try #require(gateway.putPart("00000000-0000-0000-0000-000000000000", 1, [good]))
        #expect(unknown.status == 404)

        // None of it stored: the campaign has no device, so it cannot start.
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)"))["devices"] == .number("0"))
        let early = try #require(gateway.start(id))
        #expect(early.status == 422)
        #expect(try gateway.problem(early).entry?["code"] == .string("noDevices"))

        // A campaign sent whole takes no parts.
        let whole = try gateway.object(gateway.post([good]))
        let wholeID = try #require(whole["id"]?.stringValue)
        let notFilling = try #require(gateway.putPart(wholeID, 1, [good]))
        #expect(notFilling.status == 409)
        (code, entry) = try gateway.problem(notFilling)
        #expect(code == "notFilling" && entry?["parameter"] == .string("id"))
    }

    @Test func theCampaignOfPartsIsCheckedAtItsCreation() throws {
        let gateway = try LiveGateway()
        func create(_ body: String, query: String = "?parts=true") throws -> (Int, String?, JSONObject?) {
            let response = try #require(gateway.request("POST", "/v1/campaigns" + query, json: body))
            let problem = try gateway.object(response)
            return (response.status, problem["code"]?.stringValue, problem["errors"]?.arrayValue?.first?.objectValue)
        }
        var (status, code, entry) = try create(String(decoding: Fixtures.campaign(devices: [Fixtures.token("a", 1)]), as: UTF8.self))
        #expect(status == 422 && entry?["code"] == .string("devicesInHeader") && entry?["pointer"] == .string("/devices"))
        (status, code, entry) = try create(#"{"alert":{"body":"Hi"},"confirm_devices":5}"#)
        #expect(status == 422 && entry?["pointer"] == .string("/confirm_devices"))
        (status, code, entry) = try create(#"{"alert":{"body":"Hi"},"send_at":"2001-01-01T00:00:00Z"}"#)
        #expect(status == 422 && entry?["code"] == .string("scheduleInPast"))
        (status, code, entry) = try create(#"{"alert":{"body":"Hi"}}"#, query: "?parts=yes")
        #expect(status == 400 && code == "invalidQuery" && entry?["parameter"] == .string("parts"))
        (status, code, entry) = try create(#"{"alert":{"body":"Hi"}}"#, query: "?parts=true&parts=true")
        #expect(status == 400 && entry?["code"] == .string("duplicateParameter"))
        let lines = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns?parts=true",
                                           headers: [("Content-Type", "application/x-ndjson")], body: Array("{\"alert\":{\"body\":\"Hi\"}}\n".utf8))
        #expect(lines?.status == 415)
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns"))["campaigns"]?.arrayValue?.isEmpty == true)

        // An Idempotency-Key: the same request answers with the same campaign; the same body
        // without ?parts=true is another request.
        let key = [("Idempotency-Key", "fill-1")]
        let id = try gateway.createInParts(headers: key)
        let replay = try #require(gateway.request("POST", "/v1/campaigns?parts=true", json: LiveGateway.partsCampaign, headers: key))
        #expect(replay.status == 200 && replay.header("idempotent-replayed") == "true")
        #expect(try gateway.object(replay)["id"] == .string(id))
        let whole = try #require(gateway.request("POST", "/v1/campaigns", json: LiveGateway.partsCampaign, headers: key))
        #expect(whole.status == 409)
    }

    @Test func anotherKeysCampaignTakesNoPartsFromThisKey() throws {
        let mine = "key-mine-0123456789abcdef", theirs = "key-theirs-0123456789abcdef"
        let gateway = try LiveGateway(keys: [APIKey(name: "mine", sha256: APIKeyring.hash(mine)),
                                             APIKey(name: "theirs", sha256: APIKeyring.hash(theirs))])
        let auth = [("Authorization", "Bearer " + mine)], other = [("Authorization", "Bearer " + theirs)]
        let id = try gateway.createInParts(headers: auth)
        #expect(gateway.putPart(id, 1, [Fixtures.token("a", 1)], headers: other)?.status == 404)
        #expect(gateway.start(id, headers: other)?.status == 404)
        #expect(gateway.putPart(id, 1, [Fixtures.token("a", 1)])?.status == 401)
        #expect(gateway.putPart(id, 1, [Fixtures.token("a", 1)], headers: auth)?.status == 201)
    }

    @Test func aCancelledFillingCampaignTakesNoPartsNeverStartsAndFinishes() async throws {
        let gateway = try LiveGateway()
        let id = try gateway.createInParts()
        #expect(gateway.putPart(id, 1, (0..<3).map { Fixtures.token("a", $0) })?.status == 201)
        let cancelled = try #require(gateway.request("POST", "/v1/campaigns/\(id)/cancel"))
        #expect(cancelled.status == 200)
        #expect(try gateway.object(cancelled)["status"] == .string("cancelled"))
        let part = try #require(gateway.putPart(id, 2, [Fixtures.token("b", 1)]))
        #expect(part.status == 409)
        #expect(try gateway.problem(part).code == "notFilling")
        let start = try #require(gateway.start(id))
        #expect(start.status == 409)
        #expect(try gateway.problem(start).code == "campaignFinished")
        // Its devices end cancelled, as any cancelled campaign's: nothing stays queued.
        let closed = try await eventually(timeout: .seconds(30)) {
            try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)"))["counts"]?.objectValue?["cancelled"] == .number("3")
        }
        #expect(closed)
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        #expect(gateway.sender.sent.withLock { $0.isEmpty })
    }

    @Test func deadTokensInAPartAreSkipped() async throws {
        let gateway = try LiveGateway()
        let dead = Fixtures.token("dead", 7)
        let first = try gateway.object(gateway.post([dead]))
        _ = try await gateway.waitForCompletion(try #require(first["id"]?.stringValue))
        let id = try gateway.createInParts()
        let receipt = try gateway.object(gateway.putPart(id, 1, [Fixtures.token("a", 1), dead]))
        #expect(receipt["devices"] == .number("2") && receipt["skipped"] == .number("1"))
        #expect(gateway.start(id)?.status == 200)
        let done = try await gateway.waitForCompletion(id)
        #expect(done["counts"]?.objectValue?["skipped"] == .number("1") && done["counts"]?.objectValue?["delivered"] == .number("1"))
        #expect(gateway.sender.sent.withLock { $0.filter { $0 == dead }.count } == 1, "the dead token is not sent again")
    }
}

/// The part checks alone: duplicates found by hash and confirmed by comparing tokens.
@Suite struct PartLinesTests {
    func lines(_ text: String) -> DeviceLines { DeviceLines(body: Array(text.utf8), start: 0, firstLine: 1) }

    @Test func manyDistinctTokensPassAndEveryRepeatIsReportedAtItsLine() {
        let tokens = (0..<5000).map { Fixtures.token("e", $0) }
        #expect(PartLines.problem(lines(tokens.joined(separator: "\n"))) == nil)
        let repeated = tokens + [tokens[10], tokens[4000]]
        let problem = PartLines.problem(lines(repeated.joined(separator: "\n")))
        #expect(problem?.code == .validationFailed)
        #expect(problem?.errors.map(\.location) == [.line(5001, file: nil), .line(5002, file: nil)])
        #expect(problem?.errors.first?.message == "the token of line 11 again")
    }
}
