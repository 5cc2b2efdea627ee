import APNs
import DeepLinks
import Foundation
import HTTPServer
import Payloads
import StrictJSON
import TestSupport
import Testing
@testable import Gateway
@testable import Outbox
import Timing

/// Several apps behind one API: each endpoint takes the app (in the path, or a campaign's
/// `"app"`), and a key sees only its apps; another tenant's app is 404, never 403.
@Suite struct AppsAPITests {
    static let shopKey = "shop-secret", newsKey = "news-secret", adminKey = "admin-secret", bothKey = "both-secret"

    static func apps() throws -> [GatewayApp] {
        let shop = try RouteTable(json: TwoApps.shopRoutes, source: "shop.json")
        let news = try RouteTable(json: TwoApps.newsRoutes, source: "news.json")
        let club = try RouteTable(json: TwoApps.clubRoutes, source: "club.json")
        func app(_ name: String, _ table: RouteTable, _ environments: [APNsEnvironment] = [.sandbox]) -> GatewayApp {
            GatewayApp(name: name, routes: table,
                       planner: CampaignPlanner(bundleId: table.app.bundleId, links: table, templates: TemplateLibrary([]), clock: SystemClock()),
                       environment: environments[0], environments: environments, teamId: table.app.teamId, keyId: "KEY" + String(repeating: "0", count: 7))
        }
        return [app("shop", shop), app("news", news, [.production, .sandbox]), app("club", club)]
    }

    static func gateway(log: RequestLog = RequestLog(fd: -1, clock: SystemClock())) throws -> LiveGateway {
        try LiveGateway(keys: [
            APIKey(name: "shop-backend", sha256: APIKeyring.hash(shopKey), apps: ["shop"]),
            APIKey(name: "news-backend", sha256: APIKeyring.hash(newsKey), apps: ["news"]),
            APIKey(name: "both", sha256: APIKeyring.hash(bothKey), apps: ["shop", "news"]),
            APIKey(name: "ops", sha256: APIKeyring.hash(adminKey), isAdmin: true),
        ], apps: try apps(), log: log)
    }

    /// One call with `key`, in-process or through the socket (`Transport`): the suite runs both ways.
    static func call(_ api: any APIClient, _ method: String, _ path: String, key: String, json: String? = nil,
                     headers: [(name: String, value: String)] = []) throws -> RawResponse {
        try api.call(method, path, key: key, json: json, headers: headers)
    }

    static func object(_ response: RawResponse) throws -> JSONObject {
        try response.object()
    }

    @Test(arguments: Transport.allCases) func appsListsOnlyTheKeysApps(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        func names(_ key: String) throws -> [String] {
            try Self.object(try Self.call(api, "GET", "/v1/apps", key: key))["apps"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? []
        }
        #expect(try names(Self.shopKey) == ["shop"])
        #expect(try names(Self.bothKey) == ["shop", "news"])
        #expect(try names(Self.adminKey) == ["shop", "news", "club"])
        let news = try Self.object(try Self.call(api, "GET", "/v1/apps", key: Self.newsKey))["apps"]?.arrayValue?.first?.objectValue
        #expect(news?["bundle_id"] == .string("org.example.news"))
        #expect(news?["environments"] == .array([.string("production"), .string("sandbox")]))
    }

    /// A link valid for one app is hostNotAllowed for the other; the path names the app.
    @Test(arguments: Transport.allCases) func linkChecksUseTheAppsTable(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let body = #"{"link": "https://example.com/product/42"}"#
        let shop = try Self.object(try Self.call(api, "POST", "/v1/apps/shop/links/check", key: Self.bothKey, json: body))
        #expect(shop["ok"] == .bool(true))
        let news = try Self.object(try Self.call(api, "POST", "/v1/apps/news/links/check", key: Self.bothKey, json: body))
        #expect(news["ok"] == .bool(false))
        #expect(news["error"]?.objectValue?["code"] == .string("hostNotAllowed"))
        let scheme = try Self.object(try Self.call(api, "POST", "/v1/apps/news/links/check", key: Self.newsKey, json: #"{"link": "news://article/spring"}"#))
        #expect(scheme["canonical"] == .string("https://news.example.org/article/spring"))
        // Without the app in the path: the key's only app.
        let short = try Self.object(try Self.call(api, "POST", "/v1/links/check", key: Self.newsKey, json: body))
        #expect(short["error"]?.objectValue?["code"] == .string("hostNotAllowed"))
    }

    @Test(arguments: Transport.allCases) func anotherTenantsAppIsNotFoundLikeAnAppThatDoesNotExist(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        for path in ["/v1/apps/news/links/check", "/v1/apps/blog/links/check"] {
            let r = try Self.call(api, "POST", path, key: Self.shopKey, json: #"{"link": "https://example.com/help/x"}"#)
            #expect(r.status == 404, "\(path)")
            let problem = try Self.object(r)
            #expect(problem["code"] == .string("notFound"))
            let error = problem["errors"]?.arrayValue?.first?.objectValue
            #expect(error?["code"] == .string("unknownApp"))
            #expect(error?["parameter"] == .string("app"))
            #expect(error?["detail"]?.stringValue?.hasSuffix(#"the apps are "shop""#) == true, "only the key's own apps are named")
            #expect(!String(decoding: r.body, as: UTF8.self).contains("club"))
        }
        for path in ["/v1/apps/news/routes", "/v1/apps/news/templates"] {
            #expect(try Self.call(api, "GET", path, key: Self.shopKey).status == 404, "\(path)")
        }
        #expect(try Self.call(api, "GET", "/v1/apps/news/routes", key: Self.adminKey).status == 200)
        // Several apps and none named: 404 saying to name one.
        let several = try Self.call(api, "GET", "/v1/routes", key: Self.bothKey)
        #expect(several.status == 404)
        #expect(String(decoding: several.body, as: UTF8.self).contains("/v1/apps/{app}/routes"))
    }

    @Test(arguments: Transport.allCases) func routesAndTemplatesArePerApp(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let news = try Self.object(try Self.call(api, "GET", "/v1/apps/news/routes", key: Self.newsKey))
        #expect(news["hosts"] == .array([.string("news.example.org")]))
        #expect(news["fingerprint"]?.stringValue == (try RouteTable(json: TwoApps.newsRoutes, source: "x")).fingerprint)
        let shop = try Self.object(try Self.call(api, "GET", "/v1/routes", key: Self.shopKey))
        #expect(shop["hosts"]?.arrayValue?.first == .string("example.com"))
        #expect(try Self.call(api, "GET", "/v1/apps/shop/templates", key: Self.shopKey).status == 200)
    }

    @Test(arguments: Transport.allCases) func previewsUseTheCampaignsAppAndItsTopic(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let token = TestTokens.device
        let news = #"{"app": "news", "alert": {"body": "Hi"}, "deeplink": "https://news.example.org/article/spring", "devices": ["\#(token)"]}"#
        let r = try Self.call(api, "POST", "/v1/notifications/preview", key: Self.bothKey, json: news)
        #expect(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
        #expect(String(decoding: r.body, as: UTF8.self).contains("org.example.news"))
        let viaPath = try Self.call(api, "POST", "/v1/apps/news/notifications/preview", key: Self.bothKey, json: news)
        #expect(viaPath.status == 200)
        let mismatch = try Self.object(try Self.call(api, "POST", "/v1/apps/shop/notifications/preview", key: Self.bothKey, json: news))
        #expect(mismatch["errors"]?.arrayValue?.first?.objectValue?["pointer"] == .string("/app"))
        let notMine = try Self.call(api, "POST", "/v1/notifications/preview", key: Self.shopKey, json: news)
        #expect(notMine.status == 404)
        #expect(try Self.object(notMine)["errors"]?.arrayValue?.first?.objectValue?["pointer"] == .string("/app"))
        // A key with several apps must name one.
        let unnamed = #"{"alert": {"body": "Hi"}, "devices": ["\#(token)"]}"#
        let missing = try Self.object(try Self.call(api, "POST", "/v1/notifications/preview", key: Self.bothKey, json: unnamed))
        #expect(missing["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("missing"))
        // The environment must be one the app allows.
        let sandboxShop = #"{"app": "shop", "environment": "production", "alert": {"body": "Hi"}, "devices": ["\#(token)"]}"#
        let refused = try Self.call(api, "POST", "/v1/notifications/preview", key: Self.shopKey, json: sandboxShop)
        #expect(refused.status == 422)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("/environment"))
        let sandboxNews = #"{"app": "news", "environment": "sandbox", "alert": {"body": "Hi"}, "devices": ["\#(token)"]}"#
        #expect(try Self.call(api, "POST", "/v1/notifications/preview", key: Self.newsKey, json: sandboxNews).status == 200)
    }

    /// AASA by Host: the apps listing the host, one `details` entry each.
    @Test(arguments: Transport.allCases) func aasaAnswersByHostWithOneDetailsEntryPerApp(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        func appIDs(_ host: String) throws -> [String]? {
            let r = try api.call("GET", "/.well-known/apple-app-site-association", headers: [("Host", host)])
            guard r.status == 200 else { return nil }
            let details = try Self.object(r)["applinks"]?.objectValue?["details"]?.arrayValue ?? []
            return details.compactMap { $0.objectValue?["appIDs"]?.arrayValue?.first?.stringValue }
        }
        #expect(try appIDs("example.com") == ["A1B2C3D4E5.com.example.shop", "A1B2C3D4E5.com.example.club"])
        #expect(try appIDs("www.example.com:443") == ["A1B2C3D4E5.com.example.shop"])
        #expect(try appIDs("NEWS.example.org") == ["Z9Y8X7W6V5.org.example.news"])
        #expect(try appIDs("elsewhere.example") == nil, "no app lists it: 404")
        // With one app, any host gets its file (as before).
        let single = try LiveGateway()
        let r = try single.client(transport).call("GET", "/.well-known/apple-app-site-association", headers: [("Host", "127.0.0.1:8080")])
        #expect(r.status == 200)
    }

    @Test(arguments: Transport.allCases) func theRequestLogCarriesTheApp(_ transport: Transport) throws {
        let captured = CapturedLog()
        let gateway = try Self.gateway(log: captured.log)
        let api = gateway.client(transport)
        _ = try Self.call(api, "POST", "/v1/apps/news/links/check", key: Self.newsKey, json: #"{"link": "news://article/x"}"#)
        _ = try Self.call(api, "POST", "/v1/notifications/preview", key: Self.shopKey, json: #"{"alert": {"body": "Hi"}, "devices": ["\#(TestTokens.device)"]}"#)
        _ = try Self.call(api, "GET", "/v1/apps", key: Self.shopKey)
        let apps = try captured.lines().map { try JSONParser().parse($0).objectValue?["app"] }
        #expect(apps == [.string("news"), .string("shop"), .null])
    }

    /// Link rejections and APNs latency are counted per app, as notifications are.
    @Test(arguments: Transport.allCases) func metricsNameTheApp(_ transport: Transport) async throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        _ = try Self.call(api, "POST", "/v1/apps/news/links/check", key: Self.newsKey, json: #"{"link": "https://example.com/product/42"}"#)
        _ = try Self.call(api, "POST", "/v1/notifications/preview", key: Self.shopKey,
                          json: Self.campaign(app: nil, token: TestTokens.device, link: "https://news.example.org/article/x"))
        let sent = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey,
                                 json: Self.campaign(app: nil, token: String(repeating: "cd", count: 32), link: "https://example.com/product/1"))
        #expect(sent.status == 202)
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        let text = gateway.service.metrics.render()
        #expect(text.contains(#"pushgate_links_rejected_total{app="news",code="hostNotAllowed"} 1"#))
        #expect(text.contains(#"pushgate_links_rejected_total{app="shop",code="hostNotAllowed"} 1"#))
        #expect(text.contains(#"pushgate_apns_request_duration_seconds_count{app="shop",push_type="alert"} 1"#))
        #expect(text.contains(#"pushgate_apns_request_duration_seconds_bucket{app="shop",push_type="alert",le="+Inf"} 1"#))
        #expect(!text.contains(#"pushgate_apns_request_duration_seconds_count{app="news""#))
    }

    static func campaign(app: String?, token: String, link: String) -> String {
        let named = app.map { #""app": "\#($0)", "# } ?? ""
        return #"{\#(named)"alert": {"body": "Hi"}, "deeplink": "\#(link)", "devices": ["\#(token)"]}"#
    }

    /// A key lists and reads only its own campaigns; another key's id is 404; admins see all.
    @Test(arguments: Transport.allCases) func keysSeeOnlyTheirOwnCampaigns(_ transport: Transport) async throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let shop = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey,
                                 json: Self.campaign(app: nil, token: Fixtures.token("a1", 1), link: "https://example.com/product/1"))
        #expect(shop.status == 202, "\(String(decoding: shop.body, as: UTF8.self))")
        let news = try Self.call(api, "POST", "/v1/campaigns", key: Self.newsKey,
                                 json: Self.campaign(app: "news", token: Fixtures.token("b1", 1), link: "news://article/x"))
        #expect(news.status == 202)
        let shopID = try #require(try Self.object(shop)["id"]?.stringValue)
        let newsID = try #require(try Self.object(news)["id"]?.stringValue)
        func listed(_ key: String) throws -> [String] {
            try Self.object(try Self.call(api, "GET", "/v1/campaigns", key: key))["campaigns"]?.arrayValue?
                .compactMap { $0.objectValue?["id"]?.stringValue } ?? []
        }
        #expect(try listed(Self.shopKey) == [shopID])
        #expect(try listed(Self.newsKey) == [newsID])
        #expect(try listed(Self.bothKey) == [], "a key sees what it created, not what its apps' other keys created")
        #expect(Set(try listed(Self.adminKey)) == [shopID, newsID])
        #expect(try Self.call(api, "GET", "/v1/campaigns/" + newsID, key: Self.shopKey).status == 404)
        let own = try Self.object(try Self.call(api, "GET", "/v1/campaigns/" + newsID, key: Self.newsKey))
        #expect(own["app"] == .string("news"))
        #expect(own["environment"] == .string("production"), "the app's default environment")
        #expect(try Self.call(api, "GET", "/v1/campaigns/" + shopID, key: Self.adminKey).status == 200)
        // A campaign for an app the key may not use: 404 at /app.
        let notMine = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey,
                                    json: Self.campaign(app: "news", token: Fixtures.token("c1", 1), link: "news://article/x"))
        #expect(notMine.status == 404)
        #expect(try Self.object(notMine)["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("unknownApp"))
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
    }

    /// Idempotency keys are per API key: the same key from another caller neither replays
    /// nor conflicts with the first caller's campaign.
    @Test(arguments: Transport.allCases) func idempotencyKeysAreEachCallersOwn(_ transport: Transport) throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let body = Self.campaign(app: "shop", token: Fixtures.token("d1", 1), link: "https://example.com/product/2")
        let first = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey, json: body, headers: [("idempotency-key", "order-42")])
        #expect(first.status == 202)
        let replay = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey, json: body, headers: [("idempotency-key", "order-42")])
        #expect(replay.header("idempotent-replayed") == "true")
        #expect(try Self.object(replay)["id"] == (try Self.object(first))["id"])
        let other = try Self.call(api, "POST", "/v1/campaigns", key: Self.bothKey, json: body, headers: [("idempotency-key", "order-42")])
        #expect(other.status == 202)
        #expect(other.header("idempotent-replayed") == nil, "not the first caller's campaign")
        #expect(try Self.object(other)["id"] != (try Self.object(first))["id"])
        let differentBody = Self.campaign(app: "shop", token: Fixtures.token("d2", 1), link: "https://example.com/product/3")
        let conflict = try Self.call(api, "POST", "/v1/campaigns", key: Self.bothKey, json: differentBody,
                                     headers: [("idempotency-key", "order-42")])
        #expect(conflict.status == 409, "the same caller with another body")
        #expect(!String(decoding: conflict.body, as: UTF8.self).contains(try #require(try Self.object(first)["id"]?.stringValue)),
                "another caller's campaign id is never named")
    }

    /// A dead token is its app's: listed under that app only, skipped only by that app's campaigns.
    @Test(arguments: Transport.allCases) func deadTokensBelongToTheirApp(_ transport: Transport) async throws {
        let gateway = try Self.gateway()
        let api = gateway.client(transport)
        let dead = "dead" + String(repeating: "0", count: 58) + "aa"
        let first = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey,
                                  json: Self.campaign(app: nil, token: dead, link: "https://example.com/product/1"))
        #expect(first.status == 202)
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        func tokens(_ path: String, _ key: String) throws -> [String] {
            try Self.object(try Self.call(api, "GET", path, key: key))["tokens"]?.arrayValue?.compactMap { $0.objectValue?["token"]?.stringValue } ?? []
        }
        #expect(try tokens("/v1/apps/shop/tokens/dead", Self.shopKey) == [dead])
        #expect(try tokens("/v1/tokens/dead", Self.shopKey) == [dead])
        // The webhook's item names the app the token is dead for.
        let pending = try gateway.storage.pendingFeedback(limit: 10)
        #expect(pending.map(\.app) == ["shop"])
        let item = try JSONParser().parse(FeedbackWebhook.body(pending)).objectValue?["dead_tokens"]?.arrayValue?.first?.objectValue
        #expect(item?["app"] == .string("shop"))
        #expect(item?["token"] == .string(dead))
        #expect(try tokens("/v1/apps/news/tokens/dead", Self.newsKey) == [])
        #expect(try Self.call(api, "GET", "/v1/apps/shop/tokens/dead", key: Self.newsKey).status == 404)
        // The same token in a news campaign is not skipped: it is dead for the shop only.
        let news = try Self.call(api, "POST", "/v1/campaigns", key: Self.newsKey,
                                 json: Self.campaign(app: "news", token: dead, link: "news://article/x"))
        #expect(try Self.object(news)["skipped"] == .number("0"))
        let shopAgain = try Self.call(api, "POST", "/v1/campaigns", key: Self.shopKey,
                                      json: Self.campaign(app: nil, token: dead, link: "https://example.com/product/1"))
        #expect(try Self.object(shopAgain)["skipped"] == .number("1"))
        // Registering it again through another app changes nothing for the shop.
        let wrongApp = try Self.object(try Self.call(api, "POST", "/v1/apps/news/tokens/\(dead)/register", key: Self.newsKey))
        #expect(wrongApp["was_dead"] == .bool(false))
        #expect(try tokens("/v1/apps/shop/tokens/dead", Self.shopKey) == [dead])
        let revived = try Self.object(try Self.call(api, "POST", "/v1/apps/shop/tokens/\(dead)/register", key: Self.shopKey))
        #expect(revived["was_dead"] == .bool(true))
        #expect(try tokens("/v1/apps/shop/tokens/dead", Self.shopKey) == [])
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
    }
}
