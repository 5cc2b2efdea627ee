import Foundation
import HTTPServer
import Storage
import Synchronization
import StrictJSON
import TestSupport
import Testing
@testable import Gateway
@testable import Outbox

/// What the `/ui` console reads besides the campaign pages: the list filtered by app and
/// state (with its bounded scan), and a campaign's message; each within the key's tenancy.
@Suite struct CampaignConsoleAPITests {
    typealias Keys = AppsAPITests

    static func call(_ api: any APIClient, _ path: String, query: [(name: String, value: String)] = [], key: String) throws -> RawResponse {
        try api.call("GET", path, query: query, key: key)
    }

    static func ids(_ response: RawResponse) throws -> [String] {
        try Keys.object(response)["campaigns"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue } ?? []
    }

    static func create(_ api: any APIClient, key: String, app: String, token: String, link: String, extra: String = "") throws -> String {
        let named = #""app": "\#(app)", "#
        let body = #"{\#(named)"alert": {"title": "<b>Sale</b>", "body": "Hi"}, "deeplink": "\#(link)"\#(extra), "devices": ["\#(token)"]}"#
        let response = try Keys.call(api, "POST", "/v1/campaigns", key: key, json: body)
        #expect(response.status == 202, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(try Keys.object(response)["id"]?.stringValue)
    }

    @Test(arguments: Transport.allCases) func theListFiltersByAppAndStateWithinTheKeysCampaigns(_ transport: Transport) async throws {
        let gateway = try Keys.gateway()
        let api = gateway.client(transport)
        let later = #", "send_at": "\#(RFC3339.format(Date().timeIntervalSince1970 + 3600))""#
        let shopDone = try Self.create(api, key: Keys.adminKey, app: "shop", token: Fixtures.token("a1", 1), link: "https://example.com/product/1")
        let shopLater = try Self.create(api, key: Keys.adminKey, app: "shop", token: Fixtures.token("a1", 2), link: "https://example.com/product/2", extra: later)
        let newsLater = try Self.create(api, key: Keys.adminKey, app: "news", token: Fixtures.token("a1", 3), link: "news://article/x", extra: later)
        let newsPaused = try Self.create(api, key: Keys.adminKey, app: "news", token: Fixtures.token("a1", 4), link: "news://article/y", extra: later)
        #expect(try Keys.call(api, "POST", "/v1/campaigns/\(newsPaused)/pause", key: Keys.adminKey).status == 200)
        let mine = try Self.create(api, key: Keys.newsKey, app: "news", token: Fixtures.token("a1", 5), link: "news://article/z", extra: later)
        let done = try await eventually(timeout: .seconds(30)) {
            (try? Keys.object(try Self.call(api, "/v1/campaigns/" + shopDone, key: Keys.adminKey)))?["status"] == .string("completed")
        }
        #expect(done)

        let admin = Keys.adminKey
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", key: admin)) == [mine, newsPaused, newsLater, shopLater, shopDone])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("app", "shop")], key: admin)) == [shopLater, shopDone])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("status", "scheduled")], key: admin)) == [mine, newsLater, shopLater])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("status", "paused,completed")], key: admin)) == [newsPaused, shopDone])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("app", "news"), ("status", "scheduled")], key: admin)) == [mine, newsLater])
        // A client key: only what it created, whatever the filter.
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("app", "news")], key: Keys.newsKey)) == [mine])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("status", "paused")], key: Keys.newsKey)) == [])
        #expect(try Self.ids(Self.call(api, "/v1/campaigns", query: [("app", "shop")], key: Keys.shopKey)) == [])

        // Pages follow `next`, which keeps the filters.
        var seen: [String] = []
        var query: [(name: String, value: String)] = [("limit", "1"), ("status", "scheduled,paused"), ("app", "news")]
        for _ in 0..<10 {
            let page = try Keys.object(Self.call(api, "/v1/campaigns", query: query, key: admin))
            seen += (page["campaigns"]?.arrayValue ?? []).compactMap { $0.objectValue?["id"]?.stringValue }
            guard let next = page["next"]?.stringValue else { break }
            #expect(next.hasPrefix("/v1/campaigns?limit=1&before=") && next.hasSuffix("&app=news&status=scheduled,paused"), "\(next)")
            query = next.split(separator: "?")[1].split(separator: "&").map { item in
                let parts = item.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts[1]))
            }
        }
        #expect(seen == [mine, newsPaused, newsLater])

        // Every bad value is reported, at its parameter.
        let bad = try Self.call(api, "/v1/campaigns", query: [("status", "sending,<b>x"), ("app", "Shop!")], key: admin)
        #expect(bad.status == 400)
        let errors = try Keys.object(bad)["errors"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(errors.map { $0["parameter"]?.stringValue ?? "" }.sorted() == ["app", "status"])
        #expect(errors.allSatisfy { $0["code"] == .string("invalidValue") })
        let twice = try Self.call(api, "/v1/campaigns", query: [("app", "shop"), ("app", "news")], key: admin)
        let repeated = try Keys.object(twice)["errors"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(twice.status == 400 && repeated.map { $0["code"]?.stringValue ?? "" } == ["duplicateParameter"])
    }

    /// A scan reads at most 1000 campaigns: a state none of them is in gives an empty page
    /// with a next link from where it stopped, and the last page has none.
    @Test func aStateFilterScansABoundedNumberOfCampaigns() throws {
        func summary(_ seq: Int) -> CampaignSummary {
            let done = seq == 7
            let finished: Double? = done ? 1 : nil
            let counts: [DeliveryState: Int] = [.delivered: done ? 1 : 0, .pending: done ? 0 : 1]
            return CampaignSummary(seq: Int64(seq), id: "c\(seq)", createdAt: 0, dryRun: false, devices: 1, finishedAt: finished, counts: counts)
        }
        let all: [CampaignSummary] = (1...2500).reversed().map(summary)
        let reads = Mutex(0)
        let fetch: CampaignListFilter.Fetch = { limit, before, _, _ in
            reads.withLock { $0 += 1 }
            return Array(all.filter { $0.seq < (before ?? .max) }.prefix(limit))
        }
        var filter = CampaignListFilter(limit: 10, before: nil, app: nil, statuses: [.completed])
        let first = try filter.page(owner: nil, now: 10, fetch: fetch)
        #expect(first.campaigns.isEmpty && first.next == 1501)
        filter.before = first.next
        let second = try filter.page(owner: nil, now: 10, fetch: fetch)
        #expect(second.campaigns.isEmpty && second.next == 501)
        filter.before = second.next
        let last = try filter.page(owner: nil, now: 10, fetch: fetch)
        #expect(last.campaigns.map(\.id) == ["c7"] && last.next == nil)
        #expect(filter.nextPath(501) == "/v1/campaigns?limit=10&before=501&status=completed")
        // Without a state filter: one read of `limit`.
        reads.withLock { $0 = 0 }
        let plain = try CampaignListFilter(limit: 3, before: nil).page(owner: nil, now: 10, fetch: fetch)
        #expect(plain.campaigns.map(\.seq) == [2500, 2499, 2498] && plain.next == 2498 && reads.withLock { $0 } == 1)
    }

    @Test(arguments: Transport.allCases) func aCampaignsMessageIsTheKeysToSee(_ transport: Transport) async throws {
        let gateway = try Keys.gateway()
        let api = gateway.client(transport)
        let id = try Self.create(api, key: Keys.shopKey, app: "shop", token: Fixtures.token("b2", 1), link: "https://example.com/product/9")
        let response = try Self.call(api, "/v1/campaigns/\(id)/message", key: Keys.shopKey)
        #expect(response.status == 200)
        let message = try Keys.object(response)
        #expect(message["id"] == .string(id) && message["app"] == .string("shop") && message["push_type"] == .string("alert"))
        #expect(message["topic"] == .string("com.example.shop") && message["priority"] == .number("10"))
        let payload = try #require(message["payload"]?.objectValue)
        #expect(payload["deeplink"] == .string("https://example.com/product/9") && payload["route"]?.objectValue?["name"] == .string("product"))
        let alert = payload["aps"]?.objectValue?["alert"]?.objectValue
        #expect(alert?["title"] == .string("<b>Sale</b>") && alert?["body"] == .string("Hi"))
        #expect(try Self.call(api, "/v1/campaigns/\(id)/message", key: Keys.newsKey).status == 404)
        #expect(try Self.call(api, "/v1/campaigns/\(id)/message", key: Keys.bothKey).status == 404)
        #expect(try Self.call(api, "/v1/campaigns/\(id)/message", key: Keys.adminKey).status == 200)
        #expect(try Self.call(api, "/v1/campaigns/00000000-0000-0000-0000-000000000000/message", key: Keys.adminKey).status == 404)
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
    }
}

extension CampaignConsoleAPITests {
    @Test(arguments: Transport.allCases) func reasonsAreCountedWithinTheKeysCampaigns(_ transport: Transport) async throws {
        let gateway = try Keys.gateway()
        let api = gateway.client(transport)
        let devices = [Fixtures.token("bad0", 1), Fixtures.token("bad0", 2), Fixtures.token("dead", 3), Fixtures.token("c3", 4)]
        let body = #"{"app": "shop", "alert": {"body": "Hi"}, "devices": [\#(devices.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        let created = try Keys.call(api, "POST", "/v1/campaigns", key: Keys.shopKey, json: body)
        let id = try #require(try Keys.object(created)["id"]?.stringValue)
        let done = try await eventually(timeout: .seconds(30)) {
            (try? Keys.object(try Self.call(api, "/v1/campaigns/" + id, key: Keys.shopKey)))?["status"] == .string("completed")
        }
        #expect(done)
        let answer = try Keys.object(Self.call(api, "/v1/campaigns/\(id)/reasons", key: Keys.shopKey))
        let reasons = (answer["reasons"]?.arrayValue ?? []).compactMap(\.objectValue).map {
            "\($0["state"]?.stringValue ?? "") \($0["reason"]?.stringValue ?? "") \($0.int("count") ?? -1)"
        }
        #expect(answer["id"] == .string(id) && reasons == ["failed BadDeviceToken 2", "unregistered Unregistered 1"], "\(answer)")
        let only = try Keys.object(Self.call(api, "/v1/campaigns/\(id)/reasons", query: [("state", "unregistered")], key: Keys.shopKey))
        #expect(only["reasons"]?.arrayValue?.count == 1)
        #expect(try Self.call(api, "/v1/campaigns/\(id)/reasons", key: Keys.newsKey).status == 404)
        #expect(try Self.call(api, "/v1/campaigns/\(id)/reasons", key: Keys.adminKey).status == 200)
        let bad = try Self.call(api, "/v1/campaigns/\(id)/reasons", query: [("state", "failed,nope"), ("page", "2")], key: Keys.adminKey)
        #expect(bad.status == 400)
        let errors = try Keys.object(bad)["errors"]?.arrayValue?.compactMap { $0.objectValue?["parameter"]?.stringValue } ?? []
        #expect(errors == ["page"], "an unknown parameter is reported first: \(errors)")
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
    }
}
