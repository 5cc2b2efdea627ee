import APNsCore
import APNs
import Foundation
import HTTPServer
import Payloads
import Storage
import StrictJSON
import Synchronization
import Testing
import TestSupport
@testable import Gateway
@testable import Outbox

/// Answers 503 to tokens starting "f1a" for their first two attempts, always to tokens
/// starting "f2a", and 200 otherwise (delegating the rest to `ScriptedSender`).
final class FlakySender: NotificationSender {
    let inner = ScriptedSender()
    let attempts = Mutex<[String: Int]>([:])

    func send(_ request: APNsRequest) async -> DeliveryResult {
        let n = attempts.withLock { counts -> Int in
            counts[request.deviceToken, default: 0] += 1
            return counts[request.deviceToken] ?? 0
        }
        if request.deviceToken.hasPrefix("f1a") && n <= 2 { return .failed(status: 503, reason: .serviceUnavailable) }
        if request.deviceToken.hasPrefix("f2a") { return .transportFailed(TransportFailure(.timeout, "no answer")) }
        return await inner.send(request)
    }
}

extension LiveGateway {
    func post(_ tokens: [String], headers: [(String, String)] = [], extra: String = "") -> RawResponse? {
        request("POST", "/v1/campaigns", json: String(decoding: Fixtures.campaign(devices: tokens, extra: extra), as: UTF8.self), headers: headers)
    }

    func waitForCompletion(_ id: String) async throws -> JSONObject {
        var status = JSONObject()
        let completed = try await eventually(timeout: .seconds(60)) {
            status = try object(request("GET", "/v1/campaigns/\(id)"))
            return status["status"] == .string("completed")
        }
        if !completed { Issue.record("campaign \(id) did not complete") }
        return completed ? status : JSONObject()
    }
}

@Suite struct DurableCampaignTests {
    @Test func sameIdempotencyKeyAndBodyReturnsTheOriginalCampaignWithoutSendingAgain() async throws {
        let gateway = try LiveGateway()
        let tokens = (0..<5).map { Fixtures.token("a", $0) }
        let key = [("Idempotency-Key", "order-4711")]
        let first = try #require(gateway.post(tokens, headers: key))
        #expect(first.status == 202)
        let id = try #require(try gateway.object(first)["id"]?.stringValue)
        _ = try await gateway.waitForCompletion(id)
        let again = try #require(gateway.post(tokens, headers: key))
        #expect(again.status == 202)
        #expect(again.header("idempotent-replayed") == "true")
        let replayed = try gateway.object(again)
        #expect(replayed["id"] == .string(id))
        #expect(replayed["replayed"] == .bool(true))
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        #expect(gateway.sender.sent.withLock { $0.count } == 5)
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns"))["campaigns"]?.arrayValue?.count == 1)

        let different = try #require(gateway.post(Array(tokens.prefix(2)), headers: key))
        #expect(different.status == 409)
        #expect(different.header("content-type") == "application/problem+json")
        let problem = try gateway.object(different)
        #expect(problem["code"] == .string("idempotencyKeyReused"))
        #expect(problem["detail"]?.stringValue?.contains(id) == true)
    }

    @Test func invalidIdempotencyKeysAre400() throws {
        let gateway = try LiveGateway()
        for key in ["", String(repeating: "k", count: 256), "with space", "caf\u{e9}"] {
            let response = try #require(gateway.post([Fixtures.token("a", 1)], headers: [("Idempotency-Key", key)]))
            #expect(response.status == 400, "\(key)")
            #expect(try gateway.object(response)["code"] == .string("invalidHeader"))
            let error = try gateway.object(response)["errors"]?.arrayValue?.first?.objectValue
            #expect(error?["code"] == .string("invalidIdempotencyKey"))
            #expect(error?["header"] == .string("Idempotency-Key"))
        }
        #expect(gateway.sender.sent.withLock { $0.isEmpty })
    }

    @Test func anExpiredIdempotencyKeyCreatesANewCampaign() async throws {
        let gateway = try LiveGateway(idempotencyRetentionSeconds: 0.05)
        let key = [("Idempotency-Key", "k")]
        let first = try gateway.object(gateway.post([Fixtures.token("a", 1)], headers: key))
        try await Task.sleep(nanoseconds: 100_000_000)
        let second = try gateway.object(gateway.post([Fixtures.token("a", 1)], headers: key))
        #expect(first["id"] != second["id"])
        #expect(second["replayed"] == .bool(false))
    }

    @Test func deadTokensAreSkippedUntilRegisteredAgain() async throws {
        let gateway = try LiveGateway()
        let dead = Fixtures.token("dead", 7)
        let live = Fixtures.token("a", 1)
        let first = try gateway.object(gateway.post([dead, live]))
        _ = try await gateway.waitForCompletion(try #require(first["id"]?.stringValue))

        let listed = try gateway.object(gateway.request("GET", "/v1/tokens/dead?since=1700000000000"))
        let entry = try #require(listed["tokens"]?.arrayValue?.first?.objectValue)
        #expect(entry["token"] == .string(dead))
        #expect(entry["timestamp_ms"] == .number("1700000000000"))
        #expect(entry["reason"] == .string("Unregistered"))
        #expect(try gateway.object(gateway.request("GET", "/v1/tokens/dead?since=1700000000001"))["tokens"] == .array([]))

        let second = try gateway.object(gateway.post([dead, live], extra: #","collapse_id":"second""#))
        #expect(second["skipped"] == .number("1"))
        let status = try await gateway.waitForCompletion(try #require(second["id"]?.stringValue))
        #expect(status["counts"]?.objectValue?["skipped"] == .number("1"))
        let skipped = try #require(status["results"]?.arrayValue?.first?.objectValue)
        #expect(skipped["state"] == .string("skipped"))
        #expect(skipped["reason"] == .string("Unregistered"))
        #expect(skipped["timestamp_ms"] == .number("1700000000000"))
        #expect(gateway.sender.sent.withLock { $0.filter { $0 == dead }.count } == 1)

        let registered = try gateway.object(gateway.request("POST", "/v1/tokens/\(dead)/register"))
        #expect(registered["was_dead"] == .bool(true))
        #expect(registered["dead_since_ms"] == .number("1700000000000"))
        #expect(try gateway.object(gateway.request("GET", "/v1/tokens/dead"))["tokens"] == .array([]))
        let third = try gateway.object(gateway.post([dead], extra: #","collapse_id":"third""#))
        #expect(third["skipped"] == .number("0"))
        _ = try await gateway.waitForCompletion(try #require(third["id"]?.stringValue))
        #expect(gateway.sender.sent.withLock { $0.filter { $0 == dead }.count } == 2)
    }

    @Test func deadTokenPagesFollowTheirCursor() async throws {
        let gateway = try LiveGateway()
        let dead = (0..<5).map { Fixtures.token("dead", $0) }
        let accepted = try gateway.object(gateway.post(dead))
        _ = try await gateway.waitForCompletion(try #require(accepted["id"]?.stringValue))
        var seen: [String] = []
        var next: String? = "/v1/tokens/dead?limit=2"
        while let path = next {
            let page = try gateway.object(gateway.request("GET", path))
            seen += (page["tokens"]?.arrayValue ?? []).compactMap { $0.objectValue?["token"]?.stringValue }
            next = page["next"]?.stringValue
        }
        #expect(seen == dead.sorted())
    }

    @Test func tokenEndpointErrors() throws {
        let gateway = try LiveGateway()
        let bad = try #require(gateway.request("POST", "/v1/tokens/nothex/register"))
        #expect(bad.status == 422)
        #expect(try gateway.object(bad)["code"] == .string("validationFailed"))
        let error = try gateway.object(bad)["errors"]?.arrayValue?.first?.objectValue
        #expect(error?["code"] == .string("invalidToken"))
        #expect(error?["parameter"] == .string("token"))
        for query in ["since=-1", "limit=0", "limit=1001", "cursor=garbage", "since=x", "color=red"] {
            let response = try #require(gateway.request("GET", "/v1/tokens/dead?\(query)"))
            #expect(response.status == 400, "\(query)")
            #expect(response.header("content-type") == "application/problem+json")
        }
        #expect(gateway.request("GET", "/v1/tokens/x/register")?.status == 405)
        #expect(gateway.request("GET", "/v1/campaigns?limit=0")?.status == 400)
        #expect(gateway.request("GET", "/v1/campaigns?before=x")?.status == 400)
    }

    @Test func transientFailuresAreRetriedThenFinal() async throws {
        let sender = FlakySender()
        let gateway = try LiveGateway(sender: sender.inner, senderOverride: sender)
        let recovers = Fixtures.token("f1a", 1)
        let neverAnswers = Fixtures.token("f2a", 1)
        let accepted = try gateway.object(gateway.post([recovers, neverAnswers]))
        let status = try await gateway.waitForCompletion(try #require(accepted["id"]?.stringValue))
        let results = (status["results"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(results.count == 2)
        #expect(results.first?["state"] == .string("delivered"))
        #expect(results.first?["attempts"] == .number("3"))
        #expect(results.last?["state"] == .string("failed"))
        #expect(results.last?["reason"] == .string("timeout"))
        #expect(results.last?["attempts"] == .number("5"))
        #expect(gateway.service.metrics.render().contains("pushgate_notifications_total{app=\"default\",push_type=\"alert\",result=\"retrying\",reason=\"ServiceUnavailable\"} 2"))
    }

    @Test func metricsReportTheQueueDepthFromStorage() async throws {
        let sender = GatedSender()
        let gateway = try LiveGateway(sender: sender.inner, inFlight: 1, senderOverride: sender)
        func depth() -> Int? {
            gateway.service.metrics.render().split(separator: "\n")
                .first { $0.hasPrefix("pushgate_campaign_queue_depth ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        func waitFor(_ value: Int) async -> Bool {
            await eventually(timeout: .seconds(60)) { depth() == value }
        }
        #expect(gateway.post((0..<4).map { Fixtures.token("a", $0) })?.status == 202)
        // Nothing can finish while the gate is shut: the gauge shows the whole campaign.
        #expect(await waitFor(4))
        sender.allowed.store(Int.max, ordering: .relaxed)
        #expect(await waitFor(0))
    }
}

@Suite struct LineCampaignTests {
    func post(_ gateway: LiveGateway, _ text: String) -> RawResponse? {
        RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns",
                               headers: [("Content-Type", "application/x-ndjson")], body: Array(text.utf8))
    }

    static let header = #"{"alert":{"title":"Hi","body":"Sale"},"deeplink":"https://example.com/product/42"}"#

    @Test func oneTokenPerLineAfterTheCampaign() async throws {
        let gateway = try LiveGateway()
        let tokens = (0..<30).map { Fixtures.token("b", $0) }
        let text = Self.header + "\n# devices\n" + tokens.joined(separator: "\r\n") + "\n\n"
        let accepted = try #require(post(gateway, text))
        #expect(accepted.status == 202)
        let body = try gateway.object(accepted)
        #expect(body["devices"] == .number("30"))
        let status = try await gateway.waitForCompletion(try #require(body["id"]?.stringValue))
        #expect(status["counts"]?.objectValue?["delivered"] == .number("30"))
        #expect(gateway.sender.sent.withLock { Set($0) } == Set(tokens))
    }

    @Test func everyBadLineIsReportedAndNothingIsStored() throws {
        let gateway = try LiveGateway()
        let text = Self.header + "\n" + Fixtures.token("b", 1) + "\nnot-a-token\n\n" + "abc\n"
        let response = try #require(post(gateway, text))
        #expect(response.status == 422)
        let lines = (try gateway.object(response)["errors"]?.arrayValue ?? []).compactMap { $0.objectValue?["line"] }
        #expect(lines == [.number("3"), .number("5")])
        #expect(try gateway.storage.campaigns(limit: 10, before: nil).isEmpty)
    }

    @Test func duplicatesHeaderDevicesAndEmptyListsAre422() throws {
        let gateway = try LiveGateway()
        let token = Fixtures.token("b", 1)
        let duplicate = try #require(post(gateway, Self.header + "\n" + token + "\n" + Fixtures.token("b", 2) + "\n" + token + "\n"))
        #expect(duplicate.status == 422)
        #expect(try errorCodes(gateway.object(duplicate)) == ["duplicateDevice"])
        #expect(try gateway.storage.campaigns(limit: 10, before: nil).isEmpty)
        let inHeader = #"{"alert":{"body":"x"},"devices":["\#(token)"]}"# + "\n" + token + "\n"
        #expect(try errorCodes(gateway.object(post(gateway, inHeader))) == ["devicesInHeader"])
        #expect(try errorCodes(gateway.object(post(gateway, Self.header + "\n\n"))) == ["noDevices"])
        #expect(try errorCodes(gateway.object(post(gateway, Self.header))) == ["noDevices"])
        #expect(try gateway.object(post(gateway, Self.header))["code"] == .string("validationFailed"))
        #expect(post(gateway, "{\"alert\":\n" + token)?.status == 400)
        let empty = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns", headers: [("Content-Type", "")], body: [])
        #expect(empty?.status == 415)
    }
}

/// Answers like Apple's development environment: each delivery with an `apns-unique-id`.
final class SandboxSender: NotificationSender {
    func send(_ request: APNsRequest) async -> DeliveryResult {
        if request.deviceToken.hasPrefix("bad") { return .failed(status: 400, reason: .badDeviceToken) }
        return .delivered(apnsId: request.apnsID ?? "", uniqueId: "unique-" + request.deviceToken.prefix(8))
    }
}

@Suite struct SandboxResultTests {
    @Test func eachResultNamesItsEnvironmentAndASandboxDeliveryItsUniqueID() async throws {
        let gateway = try LiveGateway(senderOverride: SandboxSender())
        let good = Fixtures.token("a0a", 1)
        let bad = Fixtures.token("bad", 1)
        let accepted = try gateway.object(gateway.post([good, bad]))
        let status = try await gateway.waitForCompletion(try #require(accepted["id"]?.stringValue))
        let results = (status["results"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(results.count == 2)
        #expect(results.first?["apns_unique_id"] == .string("unique-" + good.prefix(8)))
        #expect(results.first?["environment"] == .string("sandbox"))
        #expect(results.last?["apns_unique_id"] == nil)
        #expect(results.last?["environment"] == .string("sandbox"), "a refusal came from the sandbox too")
    }
}
