import Foundation
import StrictJSON
import TestSupport
import Testing

/// Several apps in one configuration: `apps` with inherited settings, `--app`, `pushgate
/// apps`, and the configuration errors of apps that cannot live together.
@Suite struct AppsCLITests {
    /// shop and news side by side (and club's table, for the one-host tests).
    static func folder(_ gateway: String = TwoApps.gateway()) throws -> TempDir {
        let dir = try TempDir()
        try dir.write("gateway.json", gateway)
        try dir.write("shop-routes.json", TwoApps.shopRoutes)
        try dir.write("news-routes.json", TwoApps.newsRoutes)
        try dir.write("club-routes.json", TwoApps.clubRoutes)
        try dir.write("shop-templates/.keep", "")
        try dir.write("news-templates/.keep", "")
        try dir.write("campaign.json", TwoApps.alertCampaign)
        return dir
    }

    static let environment = ConfigCommandTests.environment()

    @Test func appsListsEachAppWithItsOwnAndInheritedSettings() throws {
        let dir = try Self.folder()
        let r = try CLI.run(["apps", "--config", dir.path("gateway.json"), "--json"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let apps = try #require(try JSONParser().parse(r.stdout).objectValue?["apps"]?.arrayValue)
        #expect(apps.count == 2)
        let shop = apps[0].objectValue, news = apps[1].objectValue
        #expect(shop?["name"] == .string("shop"))
        #expect(shop?["bundle_id"] == .string("com.example.shop"))
        #expect(shop?["key_id"] == .string("SHOPKEY001"), "inherited from the top-level apns")
        #expect(news?["name"] == .string("news"))
        #expect(news?["bundle_id"] == .string("org.example.news"))
        #expect(news?["hosts"] == .array([.string("news.example.org")]))
        #expect(news?["team_id"] == .string("Z9Y8X7W6V5"), "its own")
        #expect(news?["key_id"] == .string("NEWSKEY001"))
        let table = try CLI.run(["apps", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("shop ") && lines[1].contains("com.example.shop") && lines[1].contains("example.com,www.example.com"))
        #expect(lines[2].hasPrefix("news ") && lines[2].contains("NEWSKEY001"))
    }

    @Test func theShippedSingleAppConfigurationIsOneAppNamedDefault() throws {
        let r = try CLI.run(["apps"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").last?.hasPrefix("default  com.example.shop  example.com,www.example.com") == true, "\(r.stdout)")
    }

    /// A link valid for one app is refused for the other, and each app's campaign gets its topic.
    @Test func eachAppChecksLinksAgainstItsOwnTable() throws {
        let dir = try Self.folder()
        let shop = try CLI.run(["preview", "--config", dir.path("gateway.json"), "--app", "shop", "--campaign", dir.path("campaign.json")],
                               environment: Self.environment)
        #expect(shop.status == 0, "\(shop.stderr)")
        #expect(shop.stdout.contains("apns-topic: com.example.shop\n"))
        let news = try CLI.run(["preview", "--config", dir.path("gateway.json"), "--app", "news", "--campaign", dir.path("campaign.json")],
                               environment: Self.environment)
        #expect(news.status == 1)
        #expect(news.stdout.contains("[hostNotAllowed]"), "\(news.stdout)")
        #expect(news.stdout.contains("(allowed: news.example.org)"))
        let codegen = try CLI.run(["routes", "fingerprint", "--config", dir.path("gateway.json"), "--app", "news"], environment: Self.environment)
        let other = try CLI.run(["routes", "fingerprint", "--config", dir.path("gateway.json"), "--app", "shop"], environment: Self.environment)
        #expect(codegen.status == 0 && other.status == 0)
        #expect(codegen.stdout != other.stdout)
    }

    @Test func anUnknownAppOrNoChoiceAmongSeveralIsAUsageErrorNamingTheApps() throws {
        let dir = try Self.folder()
        for command in [["preview", "--campaign", dir.path("campaign.json")], ["send", "--campaign", dir.path("campaign.json")],
                        ["jwt"], ["routes", "fingerprint"], ["codegen", "swift"]] {
            let unknown = try CLI.run(command + ["--config", dir.path("gateway.json"), "--app", "blog"], environment: Self.environment)
            #expect(unknown.status == 2, "\(command)")
            #expect(unknown.stderr.contains(#"no app named "blog""#) && unknown.stderr.contains(#"the apps are "shop" or "news""#)
                    && unknown.stderr.contains("[unknownApp]"), "\(command): \(unknown.stderr)")
            let none = try CLI.run(command + ["--config", dir.path("gateway.json")], environment: Self.environment)
            #expect(none.status == 2, "\(command)")
            #expect(none.stderr.contains("configures 2 apps") && none.stderr.contains("--app NAME"), "\(command): \(none.stderr)")
        }
        let shipped = try CLI.run(["routes", "fingerprint", "--app", "shop"], environment: Self.environment)
        #expect(shipped.status == 2)
        #expect(shipped.stderr.contains(#"the apps are "default""#))
        let routesFile = try CLI.run(["routes", "fingerprint", "--routes", "config/routes.json", "--app", "default"], environment: Self.environment)
        #expect(routesFile.status == 2)
        #expect(routesFile.stderr.contains("does not apply to a --routes file"))
    }

    @Test func sendAndJWTUseTheAppsOwnCredentialSettings() throws {
        let dir = try Self.folder()
        let send = try CLI.run(["send", "--config", dir.path("gateway.json"), "--app", "shop", "--campaign", dir.path("campaign.json")],
                               environment: Self.environment)
        #expect(send.status == 0, "\(send.stderr)")
        #expect(send.stdout.contains("built          1"))
        // A real send needs the app's key file; the message names the app's own setting.
        let real = try Self.folder(TwoApps.gateway().replacingOccurrences(of: #""dryRun": true"#, with: #""dryRun": false"#))
        let jwt = try CLI.run(["jwt", "--config", real.path("gateway.json"), "--app", "news"], environment: Self.environment)
        #expect(jwt.status == 2)
        #expect(jwt.stderr.contains("gateway.json#/apps/news/apns/keyFile: keyFile is required unless dryRun is true (or set PUSHGATE_APPS_NEWS_APNS_KEY_FILE) [missing]"), "\(jwt.stderr)")
        let check = try CLI.run(["config", "check", "--config", real.path("gateway.json")], environment: Self.environment)
        #expect(check.status == 2)
        #expect(check.stderr.contains("#/apps/shop/apns/keyFile") && check.stderr.contains("#/apps/news/apns/keyFile"), "\(check.stderr)")
    }

    @Test func configCheckAndPrintShowEveryApp() throws {
        let dir = try Self.folder()
        let check = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.hasSuffix("gateway.json: ok (2 apps: shop 2 routes, news 1 routes, APNs dry run, listen 127.0.0.1:8080)\n"), "\(check.stdout)")
        let env = ConfigCommandTests.environment(["PUSHGATE_APPS_NEWS_TOPIC": "org.example.news.beta",
                                                  "PUSHGATE_APPS_NEWS_APNS_ENVIRONMENTS": #"["sandbox", "production"]"#])
        let print = try CLI.run(["config", "print", "--config", dir.path("gateway.json")], environment: env)
        #expect(print.status == 0, "\(print.stderr)")
        let news = try JSONParser().parse(print.stdout).objectValue?["apps"]?.objectValue?["news"]?.objectValue
        #expect(news?["topic"] == .string("org.example.news.beta"))
        #expect(news?["routes"] == .string(dir.path("news-routes.json")))
        #expect(news?["apns"]?.objectValue?["environments"] == .array([.string("sandbox"), .string("production")]))
        let apps = try CLI.run(["apps", "--config", dir.path("gateway.json"), "--json"], environment: env)
        let listed = try JSONParser().parse(apps.stdout).objectValue?["apps"]?.arrayValue?[1].objectValue
        #expect(listed?["bundle_id"] == .string("org.example.news.beta"))
        #expect(listed?["environments"] == .array([.string("sandbox"), .string("production")]))
    }

    /// `apps.NAME.apns.topic` replaces `apns-topic` on that app's requests only; one
    /// top-level override inherited by several apps is a conflict.
    @Test func eachAppMayOverrideItsAPNsTopic() throws {
        let own = TwoApps.gateway().replacingOccurrences(of: #""keyId": "NEWSKEY001"}"#, with: #""keyId": "NEWSKEY001", "topic": "org.example.news.beta"}"#)
        let dir = try Self.folder(own)
        try dir.write("news.json", #"{"alert": {"body": "Hi"}, "deeplink": "news://article/x", "devices": ["\#(TestTokens.device)"]}"#)
        func topic(_ app: String, _ campaign: String) throws -> JSON? {
            let r = try CLI.run(["send", "--config", dir.path("gateway.json"), "--app", app, "--campaign", dir.path(campaign), "--json"],
                                environment: Self.environment)
            #expect(r.status == 0, "\(r.stderr)")
            return try JSONParser().parse(r.stdout).objectValue?["request"]?.objectValue?["headers"]?.objectValue?["apns-topic"]
        }
        #expect(try topic("news", "news.json") == .string("org.example.news.beta"))
        #expect(try topic("shop", "campaign.json") == .string("com.example.shop"), "the other app keeps its bundle id")
        let shared = try Self.folder(TwoApps.gateway().replacingOccurrences(of: #""apns": {"dryRun": true,"#, with: #""apns": {"topic": "com.example.any", "dryRun": true,"#))
        let check = try CLI.run(["config", "check", "--config", shared.path("gateway.json")], environment: Self.environment)
        #expect(check.status == 2)
        #expect(check.stderr.contains(#"gateway.json#/apns/topic: apps "shop" and "news" would both send with apns-topic "com.example.any" (the top level's apns.topic is every app's): set it per app, apps.NAME.apns.topic [appsConflict]"#),
                "\(check.stderr)")
        let env = ConfigCommandTests.environment(["PUSHGATE_APPS_NEWS_APNS_TOPIC": "bad topic"])
        let bad = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: env)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("PUSHGATE_APPS_NEWS_APNS_TOPIC"), "\(bad.stderr)")
    }

    @Test func aVariableForAnAppThatIsNotConfiguredIsAnError() throws {
        let dir = try Self.folder()
        let env = ConfigCommandTests.environment(["PUSHGATE_APPS_BLOG_ROUTES": "blog.json"])
        let r = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: env)
        #expect(r.status == 2)
        #expect(r.stderr.contains("environment variable PUSHGATE_APPS_BLOG_ROUTES: no setting reads this variable"), "\(r.stderr)")
    }

    @Test func badAppsAreEachReported() throws {
        let dir = try Self.folder(#"""
        {"apps": {"Shop-1": {}, "news": {"colour": 1, "routes": 7, "apns": {"environment": "staging", "url": "https://x"}},
                  "club": {"routes": "club-routes.json", "apns": {"environments": ["sandbox"]}}},
         "templates": "shop-templates", "apns": {"dryRun": true, "environment": "production"}}
        """#)
        let r = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(r.status == 2)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("#/apps/Shop-1: an app name is 1 to 32 lower-case letters") && $0.hasSuffix("[invalidValue]") }, "\(r.stderr)")
        #expect(lines.contains { $0.contains("#/apps/news/colour: unknown key \"colour\"") })
        #expect(lines.contains { $0.contains("#/apps/news/routes: expected a string, found a number") || $0.contains("#/apps/news/routes: expected a string") })
        #expect(lines.contains { $0.contains("#/apps/news/apns/environment: expected \"production\" or \"sandbox\", not \"staging\"") })
        #expect(lines.contains { $0.contains("#/apps/news/apns/url: unknown key \"url\"") }, "url is common to every app")
        #expect(lines.contains { $0.contains("#/apps/club/apns/environments: the list must include the default environment \"production\"") })
        for bad in [#"{"apps": {}}"#, #"{"apps": []}"#] {
            let empty = try Self.folder(bad)
            let e = try CLI.run(["config", "check", "--config", empty.path("gateway.json")], environment: Self.environment)
            #expect(e.status == 2)
            #expect(e.stderr.contains("#/apps: "), "\(e.stderr)")
        }
    }

    @Test func twoTeamsClaimingOnePathOnOneHostIsAConflictNamingTheRoutes() throws {
        let rival = #"""
        {"app": {"teamId": "Q1W2E3R4T5", "bundleId": "com.rival.shop", "scheme": "rival"},
         "hosts": ["www.example.com"],
         "routes": [{"name": "item", "path": "/product/:sku", "params": {"sku": "slug"}}, {"name": "about", "path": "/about"}]}
        """#
        let dir = try Self.folder(#"""
        {"apps": {"shop": {"routes": "shop-routes.json"}, "rival": {"routes": "rival-routes.json"}},
         "templates": "shop-templates", "apns": {"dryRun": true}}
        """#)
        try dir.write("rival-routes.json", rival)
        let r = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"gateway.json#/apps/rival/routes: apps "shop" (team A1B2C3D4E5) and "rival" (team Q1W2E3R4T5) both claim host "www.example.com" for the same paths: shop route "product" (/product/:id) and rival route "item" (/product/:sku) both match /product/"#), "\(r.stderr)")
        #expect(r.stderr.contains("[appsConflict]"))
        #expect(!r.stderr.contains("about"), "routes that do not overlap are not named")
        // serve refuses to start with it too.
        let serve = try CLI.run(["serve", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("[appsConflict]"))
    }

    @Test func oneTeamWithTwoAppsOnOneHostIsFineButOneBundleIdTwiceIsNot() throws {
        let dir = try Self.folder(#"""
        {"apps": {"shop": {"routes": "shop-routes.json"}, "club": {"routes": "club-routes.json"}},
         "templates": "shop-templates", "apns": {"dryRun": true}}
        """#)
        let ok = try CLI.run(["config", "check", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(ok.status == 0, "\(ok.stderr)")
        let twice = try Self.folder(#"""
        {"apps": {"shop": {"routes": "shop-routes.json"}, "copy": {"routes": "club-routes.json", "topic": "com.example.shop"}},
         "templates": "shop-templates", "apns": {"dryRun": true}}
        """#)
        let r = try CLI.run(["config", "check", "--config", twice.path("gateway.json")], environment: Self.environment)
        #expect(r.status == 2)
        #expect(r.stderr.contains(#"gateway.json#/apps/copy/topic: apps "shop" and "copy" have the same bundle id "com.example.shop""#), "\(r.stderr)")
    }

    /// A campaign file that names its app needs no --app; one that disagrees with --app is refused.
    @Test func aCampaignNamesItsApp() throws {
        let dir = try Self.folder()
        let token = String(repeating: "cd", count: 32)
        try dir.write("news.json", #"{"app": "news", "alert": {"body": "Hi"}, "deeplink": "news://article/spring", "devices": ["\#(token)"]}"#)
        try dir.write("blog.json", #"{"app": "blog", "alert": {"body": "Hi"}, "devices": ["\#(token)"]}"#)
        let preview = try CLI.run(["preview", "--config", dir.path("gateway.json"), "--campaign", dir.path("news.json")], environment: Self.environment)
        #expect(preview.status == 0, "\(preview.stderr)")
        #expect(preview.stdout.contains("apns-topic: org.example.news\n"))
        #expect(preview.stdout.contains("https://news.example.org/article/spring"))
        let both = try CLI.run(["preview", "--config", dir.path("gateway.json"), "--app", "shop", "--campaign", dir.path("news.json")], environment: Self.environment)
        #expect(both.status == 2)
        #expect(both.stderr.contains(#"news.json#/app: the campaign is for app "news", --app says "shop" [unknownApp]"#), "\(both.stderr)")
        let unknown = try CLI.run(["send", "--config", dir.path("gateway.json"), "--campaign", dir.path("blog.json")], environment: Self.environment)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains(#"blog.json#/app: no app named "blog""#) && unknown.stderr.contains(#""shop" or "news""#), "\(unknown.stderr)")
        // A chosen environment must be one the app allows (shop: sandbox only).
        try dir.write("prod.json", #"{"app": "shop", "environment": "production", "alert": {"body": "Hi"}, "devices": ["\#(token)"]}"#)
        let prod = try CLI.run(["send", "--config", dir.path("gateway.json"), "--campaign", dir.path("prod.json")], environment: Self.environment)
        #expect(prod.status == 1)
        #expect(prod.stderr.contains("prod.json#/environment:") && prod.stderr.contains("[invalidValue]"), "\(prod.stderr)")
    }

    /// `serve` with two apps of two teams: each app's campaign goes out with its own topic,
    /// key and team (the fake APNs refuses a topic the key may not push to), through one
    /// connection per team; the AASA and the apps list answer per app.
    @Test func serveSendsEachAppsCampaignsWithItsOwnCredentials() throws {
        let (dir, fake) = try Self.twoKeys()
        defer { fake.stop() }
        let server = try ServeProcess(config: dir.path("gateway.json"))
        defer { _ = server.terminate() }
        let shopToken = String(repeating: "a1", count: 32), newsToken = String(repeating: "b2", count: 32)
        let shop = server.request("POST", "/v1/campaigns", json: Array(#"{"app": "shop", "alert": {"body": "Sale"}, "deeplink": "shop://product/7", "devices": ["\#(shopToken)"]}"#.utf8))
        let news = server.request("POST", "/v1/campaigns", json: Array(#"{"app": "news", "alert": {"body": "News"}, "deeplink": "news://article/today", "devices": ["\#(newsToken)"]}"#.utf8))
        #expect(shop?.status == 202 && news?.status == 202, "\(shop?.bodyText ?? "") \(news?.bodyText ?? "")")
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) { fake.answers().count >= 2 })
        let log = fake.log()
        let byToken = Dictionary(log.compactMap { o in o.string("token").map { ($0, o) } }, uniquingKeysWith: { a, _ in a })
        #expect(byToken[shopToken]?.string("topic") == "com.example.shop")
        #expect(byToken[shopToken]?.string("kid") == "SHOPKEY001")
        #expect(byToken[newsToken]?.string("topic") == "org.example.news")
        #expect(byToken[newsToken]?.string("kid") == "NEWSKEY001")
        #expect(log.allSatisfy { $0.int("status") == 200 }, "\(log)")
        // `campaigns --app` lists one app's campaigns (read-only, next to the server).
        let newsOnly = try CLI.run(["campaigns", "--config", dir.path("gateway.json"), "--app", "news", "--json"], environment: Self.environment)
        #expect(newsOnly.status == 0, "\(newsOnly.stderr)")
        let listed = try JSONParser().parse(newsOnly.stdout).objectValue?["campaigns"]?.arrayValue?.compactMap { $0.objectValue?["app"]?.stringValue }
        #expect(listed == ["news"])
        let all = try CLI.run(["campaigns", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(all.stdout.split(separator: "\n").count == 3, "\(all.stdout)")
        let unknown = try CLI.run(["campaigns", "--config", dir.path("gateway.json"), "--app", "blog"], environment: Self.environment)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains(#"no app named "blog""#) && unknown.stderr.contains("[unknownApp]"), "\(unknown.stderr)")
        #expect(Set(log.compactMap { $0.int("connection") }).count == 2, "one connection per team")
        let apps = server.object("GET", "/v1/apps")?["apps"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue }
        #expect(apps == ["shop", "news"])
        let aasa = server.request("GET", "/.well-known/apple-app-site-association", headers: [("Host", "news.example.org")])
        #expect(aasa?.bodyText.contains("Z9Y8X7W6V5.org.example.news") == true)
        #expect(aasa?.bodyText.contains("com.example.shop") == false)
        let metrics = server.request("GET", "/metrics")?.bodyText ?? ""
        #expect(eventuallyBlocking(timeout: .seconds(10), interval: .milliseconds(20)) {
            (server.request("GET", "/metrics")?.bodyText ?? "").contains(#"pushgate_notifications_total{app="news",push_type="alert",result="delivered",reason=""} 1"#)
        }, "\(metrics)")
    }

    /// shop and news, each with its own team and key, against a fake APNs that knows both
    /// keys and their topics; `extra` members go into gateway.json.
    static func twoKeys(script: String = "{}", extra: String = "") throws -> (TempDir, FakeAPNsServer) {
        let dir = try Self.folder()
        let newsKey = try FakeAPNsServer.Key.generate(in: dir.url, name: "news")
        let fake = try FakeAPNsServer(scriptJSON: script, keys: [
            FakeAPNsServer.Key(teamId: "A1B2C3D4E5", keyId: "SHOPKEY001", keyFile: FakeAPNsServer.keyFile, topics: ["com.example.shop"]),
            FakeAPNsServer.Key(teamId: "Z9Y8X7W6V5", keyId: "NEWSKEY001", keyFile: newsKey, topics: ["org.example.news"]),
        ])
        try dir.write("gateway.json", """
        {"apps": {"shop": {"routes": "shop-routes.json"},
                  "news": {"routes": "news-routes.json", "templates": "news-templates",
                           "apns": {"teamId": "Z9Y8X7W6V5", "keyId": "NEWSKEY001", "keyFile": "\(newsKey)"}}},
         "templates": "shop-templates",
         "apns": {"url": "\(fake.url)", "caFile": "\(fake.caFile)", "teamId": "A1B2C3D4E5", "keyId": "SHOPKEY001",
                  "keyFile": "\(FakeAPNsServer.keyFile)"},
         "server": {"listen": "127.0.0.1:0", "requestLog": "off"}, \(extra)
         "storage": {"path": "\(dir.path("gateway.db"))"}}
        """)
        return (dir, fake)
    }

    /// APNs refuses the news key: the news campaign waits (nothing spent, `/readyz` still
    /// ready, `apns_apps` naming it) while the shop's campaign is delivered.
    @Test func aRefusedKeyHoldsOnlyItsOwnAppsCampaigns() throws {
        let (dir, fake) = try Self.twoKeys(script: #"{"keyProblems": {"NEWSKEY001": "InvalidProviderToken"}}"#,
                                           extra: #""dispatcher": {"maxAttempts": 1},"#)
        defer { fake.stop() }
        let server = try ServeProcess(config: dir.path("gateway.json"))
        defer { _ = server.terminate() }
        let newsTokens = (0..<5).map { String(format: "%02x", $0) + String(repeating: "b2", count: 31) }
        let shopTokens = (0..<5).map { String(format: "%02x", $0) + String(repeating: "a1", count: 31) }
        func devices(_ tokens: [String]) -> String { tokens.map { "\"\($0)\"" }.joined(separator: ",") }
        let news = server.request("POST", "/v1/campaigns", json: Array(#"{"app": "news", "alert": {"body": "News"}, "devices": [\#(devices(newsTokens))]}"#.utf8))
        #expect(news?.status == 202, "\(news?.bodyText ?? "")")
        // The news key is refused (one probe request reaches APNs), then its campaign waits.
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            (server.object("GET", "/readyz")?["checks"]?.objectValue?["apns_apps"]?.stringValue ?? "").contains("news (sandbox)")
        }, "\(String(describing: server.object("GET", "/readyz")))")
        let shop = server.request("POST", "/v1/campaigns", json: Array(#"{"app": "shop", "alert": {"body": "Sale"}, "devices": [\#(devices(shopTokens))]}"#.utf8))
        #expect(shop?.status == 202, "\(shop?.bodyText ?? "")")
        let shopID = try #require(shop.flatMap { try? JSONParser().parse($0.body).objectValue?["id"]?.stringValue })
        let newsID = try #require(news.flatMap { try? JSONParser().parse($0.body).objectValue?["id"]?.stringValue })
        #expect(eventuallyBlocking(timeout: .seconds(30), interval: .milliseconds(20)) {
            server.object("GET", "/v1/campaigns/\(shopID)")?["counts"]?.objectValue?["delivered"] == .number("5")
        }, "the shop's campaign is delivered while the news key is refused")
        let ready = server.request("GET", "/readyz")
        #expect(ready?.status == 200, "one app's key refused is not the whole gateway down: \(ready?.bodyText ?? "")")
        let waiting = server.object("GET", "/v1/campaigns/\(newsID)")?["counts"]?.objectValue
        #expect(waiting?["delivered"] == nil || waiting?["delivered"] == .number("0"), "\(String(describing: waiting))")
        #expect(waiting?["failed"] == nil || waiting?["failed"] == .number("0"), "maxAttempts 1, yet nothing failed: \(String(describing: waiting))")
        // Only what was in flight when APNs first refused reached it, each device once; then nothing.
        let newsRequests = fake.log().filter { $0.string("kid") == "NEWSKEY001" }.compactMap { $0.string("token") }
        #expect(Set(newsRequests).count == newsRequests.count, "no refused device was sent again: \(newsRequests)")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(fake.log().filter { $0.string("kid") == "NEWSKEY001" }.count == newsRequests.count, "nothing more while the key is held")
        let metrics = server.request("GET", "/metrics")?.bodyText ?? ""
        #expect(metrics.contains(#"pushgate_apns_key_stopped{key_id="NEWSKEY001",reason="InvalidProviderToken"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"pushgate_apns_key_stopped{key_id="SHOPKEY001",reason=""} 0"#))
        _ = server.terminate()
    }

    /// check-link and aasa take the app of a configuration too.
    @Test func checkLinkAndAASAUseTheChosenAppsTable() throws {
        let dir = try Self.folder()
        let news = try CLI.run(["check-link", "--config", dir.path("gateway.json"), "--app", "news", "https://example.com/product/42"],
                               environment: Self.environment)
        #expect(news.status == 1)
        #expect(news.stdout.hasPrefix("hostNotAllowed:"), "\(news.stdout)")
        let shop = try CLI.run(["check-link", "--config", dir.path("gateway.json"), "--app", "shop", "https://example.com/product/42"],
                               environment: Self.environment)
        #expect(shop.status == 0)
        let aasa = try CLI.run(["aasa", "generate", "--config", dir.path("gateway.json"), "--app", "news"], environment: Self.environment)
        #expect(aasa.status == 0, "\(aasa.stderr)")
        #expect(aasa.stdout.contains("Z9Y8X7W6V5.org.example.news"))
        let none = try CLI.run(["aasa", "generate", "--config", dir.path("gateway.json")], environment: Self.environment)
        #expect(none.status == 2)
        #expect(none.stderr.contains("choose one with --app NAME [unknownApp]"))
    }
}
