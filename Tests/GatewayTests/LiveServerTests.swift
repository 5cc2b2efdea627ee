#if canImport(Glibc)
import APNsCore
import Glibc
#endif
import APNs
import DeepLinks
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
import Crypto
import Timing

/// Answers by token prefix so one campaign can exercise every outcome; can be slowed to
/// keep sends in flight.
final class ScriptedSender: NotificationSender {
    let delayNanoseconds: UInt64
    let sent = Mutex<[String]>([])

    init(delayNanoseconds: UInt64 = 0) {
        self.delayNanoseconds = delayNanoseconds
    }

    func send(_ request: APNsRequest) async -> DeliveryResult {
        if delayNanoseconds > 0 { try? await Task.sleep(nanoseconds: delayNanoseconds) }
        sent.withLock { $0.append(request.deviceToken) }
        if request.deviceToken.hasPrefix("dead") {
            return .unregistered(reason: .unregistered, timestampMilliseconds: 1_700_000_000_000)
        }
        if request.deviceToken.hasPrefix("bad0") { return .failed(status: 400, reason: .badDeviceToken) }
        return .delivered(apnsId: request.apnsID ?? "")
    }
}

/// Sends only as many as the test allows (each send waits for its permit), recording when
/// each went out: tests of pause and cancel then do not depend on the machine's speed.
final class GatedSender: NotificationSender {
    let inner = ScriptedSender()
    let allowed = Atomic<Int>(0)
    let started = Atomic<Int>(0)
    let sentAt = Mutex<[Double]>([])

    /// 0: every send waits until the test raises `allowed`.
    init(allowed: Int = 0) { self.allowed.store(allowed, ordering: .relaxed) }

    func send(_ request: APNsRequest) async -> DeliveryResult {
        let n = started.add(1, ordering: .relaxed).newValue
        while allowed.load(ordering: .relaxed) < n { try? await Task.sleep(nanoseconds: 2_000_000) }
        sentAt.withLock { $0.append(Date().timeIntervalSince1970) }
        return await inner.send(request)
    }

    var sent: Int { inner.sent.withLock { $0.count } }
}

enum Fixtures {
    static func bytes(_ relative: String) throws -> [UInt8] { try TestPaths.bytes(relative) }

    static func routeTable() throws -> RouteTable {
        try RouteTable(jsonBytes: try bytes("config/routes.json"), source: "config/routes.json")
    }

    static func templates() throws -> TemplateLibrary {
        var templates: [Template] = []
        for name in ["order_ready", "price_drop", "abandoned_cart"] {
            if case .success(let template) = Template.parse(jsonBytes: try bytes("Templates/\(name).json"), name: name) {
                templates.append(template)
            }
        }
        return TemplateLibrary(templates)
    }

    static func token(_ prefix: String, _ n: Int) -> String {
        let hex = String(n, radix: 16)
        let digits = prefix + String(repeating: "0", count: max(0, 6 - hex.count)) + hex
        return digits + String(repeating: "0", count: 64 - digits.count)
    }

    static func campaign(devices: [String], extra: String = "") -> [UInt8] {
        let list = devices.map { "\"\($0)\"" }.joined(separator: ",")
        return Array("""
        {"alert":{"title":"Hi","body":"Sale"},"deeplink":"https://example.com/product/42"\(extra),"devices":[\(list)]}
        """.utf8)
    }
}


/// A live server on an ephemeral loopback port with the shipped route table and templates.
final class LiveGateway {
    let server: HTTPServer
    let service: GatewayService
    let dispatcher: Dispatcher
    let storage: SQLiteCampaignStorage
    let sender: ScriptedSender
    var port: Int { server.port }

    /// `databasePath` nil: a fresh database. `inFlight`: the dispatcher's window.
    init(keys: [APIKey] = [], maxBodyBytes: Int = 1 << 20, sender: ScriptedSender = ScriptedSender(),
         readiness: [ReadinessCheck] = [], databasePath: String? = nil, inFlight: Int = 8,
         idempotencyRetentionSeconds: Double = 3600, senderOverride: (any NotificationSender)? = nil,
         confirmAbove: Int = SendGuard.defaultConfirmAbove, apps: [GatewayApp]? = nil,
         log: RequestLog = RequestLog(fd: -1, clock: SystemClock()), privateProbes: Bool = false) throws {
        let table = try Fixtures.routeTable()
        let planner = CampaignPlanner(bundleId: table.app.bundleId, links: table, templates: try Fixtures.templates(), clock: SystemClock())
        let tokens = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: SystemClock())
        let directory = AppDirectory(apps ?? [GatewayApp(name: "default", routes: table, planner: planner, environment: .sandbox,
                                                           environments: [.sandbox], teamId: nil, keyId: nil)])
        let components = GatewayComponents(
            apps: directory, sender: senderOverride ?? sender,
            dryRunSender: DryRunSender(tokens: tokens, baseURL: "https://api.sandbox.push.apple.com"),
            configuredIsDryRun: false, readiness: readiness, sendGuard: SendGuard(confirmAbove: confirmAbove))
        var settings = ServerSettings()
        settings.apiKeys = keys
        settings.privateProbes = privateProbes
        settings.http = HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: maxBodyBytes)
        let metrics = Metrics()
        storage = try SQLiteCampaignStorage(path: databasePath ?? temporaryDatabasePath(), options: .init(synchronousFull: false))
        dispatcher = Dispatcher(storage: storage, sender: components.sender, dryRunSender: components.dryRunSender, metrics: metrics,
                                options: .init(inFlight: inFlight, claimBatch: 4, retryBaseSeconds: 0.01, retryMaxSeconds: 0.05), clock: SystemClock())
        try dispatcher.start()
        let campaigns = DurableCampaigns(storage: storage, dispatcher: dispatcher, idempotencyRetentionSeconds: idempotencyRetentionSeconds, clock: SystemClock())
        service = try GatewayAPI.makeService(components, settings: settings, metrics: metrics, log: log, campaigns: campaigns, clock: SystemClock())
        server = try HTTPServer(configuration: settings.http, responder: service, clock: SystemClock())
        self.sender = sender
    }

    deinit {
        _ = server.shutdown(deadlineSeconds: 1)
        _ = dispatcher.stop(deadlineSeconds: 1)
    }

    /// The gateway through its socket, as any client reaches it.
    var live: LiveClient { LiveClient(port: port) }

    /// The gateway's responder called in this process: the same answers, no socket.
    var inProcess: InProcessClient { InProcessClient(service) }

    func client(_ transport: Transport) -> any APIClient {
        switch transport {
        case .inProcess: inProcess
        case .live: live
        }
    }

    /// `path` may carry its query already encoded (it goes on the wire as written).
    func request(_ method: String, _ path: String, json body: String? = nil, headers: [(String, String)] = []) -> RawResponse? {
        try? live.call(method, path, json: body, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    func object(_ response: RawResponse?) throws -> JSONObject {
        let response = try #require(response)
        return try #require(try JSONParser().parse(response.body).objectValue)
    }
}

/// How a suite reaches a `LiveGateway`; a suite that takes it as an argument runs both ways,
/// and both must answer alike.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess, live
    var testDescription: String { rawValue }
}

@Suite struct LiveServerTests {
    @Test func linkCheckAnswers200EitherWay() throws {
        let gateway = try LiveGateway()
        let accepted = try gateway.object(gateway.request("POST", "/v1/links/check", json: #"{"link":"shop://product/42?utm_source=push"}"#))
        #expect(accepted["ok"] == .bool(true))
        #expect(accepted["canonical"] == .string("https://example.com/product/42?utm_source=push"))
        let rejectedResponse = gateway.request("POST", "/v1/links/check", json: #"{"link":"java\tscript:alert(1)"}"#)
        #expect(rejectedResponse?.status == 200)
        let rejected = try gateway.object(rejectedResponse)
        #expect(rejected["ok"] == .bool(false))
        let batch = try gateway.object(gateway.request("POST", "/v1/links/check",
                                                       json: #"{"links":["https://example.com/profile","https://example.com.evil.net/"]}"#))
        #expect(batch["accepted"] == .number("1"))
        #expect(batch["rejected"] == .number("1"))
        #expect(gateway.service.metrics.render().contains("pushgate_links_rejected_total{app=\"default\",code=\"hostNotAllowed\"} 1"))
    }

    @Test func everyErrorIsAProblemWithItsStatus() throws {
        let gateway = try LiveGateway(maxBodyBytes: 2048)
        func code(_ response: RawResponse?) throws -> String? {
            let response = try #require(response)
            #expect(response.header("content-type") == "application/problem+json")
            return try JSONParser().parse(response.body).objectValue?["code"]?.stringValue
        }
        let malformed = gateway.request("POST", "/v1/links/check", json: "{\"link\":")
        #expect(malformed?.status == 400)
        #expect(try code(malformed) == "malformedJSON")
        let missing = gateway.request("GET", "/v1/nothing")
        #expect(missing?.status == 404)
        let wrongMethod = gateway.request("GET", "/v1/links/check")
        #expect(wrongMethod?.status == 405)
        #expect(wrongMethod?.header("allow") == "POST")
        let big = gateway.request("POST", "/v1/links/check", json: "{\"link\":\"" + String(repeating: "a", count: 4000) + "\"}")
        #expect(big?.status == 413)
        #expect(try code(big) == "bodyTooLarge")
        let notJSON = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/links/check",
                                             headers: [("Content-Type", "text/plain")], body: Array("{}".utf8))
        #expect(notJSON?.status == 415)
        let invalid = gateway.request("POST", "/v1/links/check", json: #"{"link": 5, "extra": true}"#)
        #expect(invalid?.status == 422)
        let problem = try gateway.object(invalid)
        #expect(problem["errors"]?.arrayValue?.count == 2)
    }

    @Test func aFramingViolationIsAProblemAndTheConnectionCloses() throws {
        let gateway = try LiveGateway()
        for (first, code) in [("", "ambiguousFraming"), ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "ambiguousFraming")] {
            let client = try #require(RawHTTPClient(port: gateway.port))
            client.send(first + "POST /v1/links/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\nGET /v1/routes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (data, closed) = client.readUntilClose(seconds: 5)
            #expect(closed)
            var rest = data[...]
            if !first.isEmpty, let probe = RawResponse(parsing: Array(rest)) {
                #expect(probe.status == 200)
                rest = rest.dropFirst(probe.length)
            }
            let response = try #require(RawResponse(parsing: Array(rest)))
            #expect(response.status == 400)
            #expect(response.header("content-type") == "application/problem+json")
            #expect(response.header("connection")?.lowercased() == "close")
            #expect(response.header("x-request-id") != nil)
            let problem = try gateway.object(response)
            #expect(problem["code"]?.stringValue == "malformedRequest")
            let error = problem["errors"]?.arrayValue?.first?.objectValue
            #expect(error?["code"]?.stringValue == code)
            #expect(error?["header"]?.stringValue == "Transfer-Encoding")
            #expect(rest.count == response.length, "something followed the refusal")
        }
        #expect(gateway.service.metrics.render().contains("status=\"400\""))
    }

    /// Where libmicrohttpd would answer by itself in HTML (a malformed Content-Length or
    /// version on a later request, a bad chunk on any), the client gets the gateway's
    /// problem, its request id, and the close; nothing after it runs.
    @Test func libmicrohttpdsOwnAnswersAreProblemsToo() throws {
        let gateway = try LiveGateway()
        let probe = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let cases: [(text: String, status: Int, code: String, error: String?, header: String?)] = [
            (probe + "POST /v1/links/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n", 400, "malformedRequest",
             "invalidContentLength", "Content-Length"),
            (probe + "POST /v1/links/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400,
             "malformedRequest", "invalidContentLength", "Content-Length"),
            (probe + "GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", 505, "httpVersionNotSupported", nil, nil),
            ("POST /v1/links/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
             400, "malformedRequest", "malformedChunk", nil),
        ]
        for (text, status, code, error, header) in cases {
            let client = try #require(RawHTTPClient(port: gateway.port))
            client.send(text + "GET /v1/routes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (data, closed) = client.readUntilClose(seconds: 5)
            #expect(closed, "\(code) \(error ?? "")")
            var rest = data[...]
            if text.hasPrefix(probe), let first = RawResponse(parsing: Array(rest)) {
                #expect(first.status == 200)
                rest = rest.dropFirst(first.length)
            }
            let response = try #require(RawResponse(parsing: Array(rest)), "\(String(decoding: rest, as: UTF8.self))")
            #expect(response.status == status)
            #expect(response.header("content-type") == "application/problem+json")
            #expect(response.header("connection")?.lowercased() == "close")
            #expect(response.header("x-request-id") != nil)
            let problem = try gateway.object(response)
            #expect(problem["code"]?.stringValue == code)
            let first = problem["errors"]?.arrayValue?.first?.objectValue
            #expect(first?["code"]?.stringValue == error)
            #expect(first?["header"]?.stringValue == header)
            #expect(rest.count == response.length, "something followed the refusal")
        }
        #expect(gateway.service.metrics.render().contains("status=\"505\""))
    }

    @Test func aNumberAPhoneCannotReadIs422WithItsPointer() throws {
        let gateway = try LiveGateway()
        let body = #"{"alert":{"body":"x"},"data":{"n":1e999,"id":9007199254740993},"devices":["\#(Fixtures.token("a", 1))"]}"#
        for path in ["/v1/notifications/preview", "/v1/campaigns"] {
            let response = gateway.request("POST", path, json: body)
            #expect(response?.status == 422)
            let errors = try #require(try gateway.object(response)["errors"]?.arrayValue)
            #expect(errors.compactMap { $0.objectValue?["pointer"]?.stringValue } == ["/data/n", "/data/id"])
            #expect(errors.allSatisfy { $0.objectValue?["code"]?.stringValue == "unsafeNumber" })
        }
    }

    @Test func unroutableCampaignLinkIs422WithTheLinkCode() throws {
        let gateway = try LiveGateway()
        let body = #"{"alert":{"body":"x"},"deeplink":"https://example.com/product/abc","devices":["\#(Fixtures.token("a", 1))", "nothex"]}"#
        let response = gateway.request("POST", "/v1/notifications/preview", json: body)
        #expect(response?.status == 422)
        let problem = try gateway.object(response)
        let errors = try #require(problem["errors"]?.arrayValue)
        let codes = errors.compactMap { $0.objectValue?["code"]?.stringValue }
        let pointers = errors.compactMap { $0.objectValue?["pointer"]?.stringValue }
        #expect(codes.contains("invalidParameter"))
        #expect(pointers.contains("/deeplink"))
        #expect(pointers.contains("/devices/1"))
    }

    @Test func aCampaignWithManyBadDevicesListsTheFirstHundredProblemsAndCountsAll() throws {
        let gateway = try LiveGateway()
        let body = #"{"alert":{"body":"x"},"devices":["# + Array(repeating: "1", count: 300).joined(separator: ",") + "]}"
        for path in ["/v1/notifications/preview", "/v1/campaigns"] {
            let response = gateway.request("POST", path, json: body)
            #expect(response?.status == 422)
            let problem = try gateway.object(response)
            #expect(problem["code"]?.stringValue == "validationFailed")
            #expect(problem["detail"]?.stringValue == "300 problems in the campaign (the first 100 are listed)")
            let errors = try #require(problem["errors"]?.arrayValue)
            #expect(errors.count == 100)
            #expect(errors.last?.objectValue?["pointer"]?.stringValue == "/devices/99")
        }
    }

    @Test func previewShowsTheExactRequests() throws {
        let gateway = try LiveGateway()
        let response = gateway.request("POST", "/v1/notifications/preview",
                                       json: String(decoding: try Fixtures.bytes("config/campaigns/inline-alert.json"), as: UTF8.self))
        #expect(response?.status == 200)
        let text = try #require(response?.bodyText)
        #expect(text.contains("/3/device/0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"))
        #expect(text.contains("bearer <redacted>"))
    }

    @Test func campaignRunsInTheBackgroundAndReportsEveryDevice() async throws {
        let gateway = try LiveGateway()
        let tokens = (0..<25).map { Fixtures.token("a", $0) } + [Fixtures.token("dead", 1), Fixtures.token("bad0", 1)]
        let accepted = gateway.request("POST", "/v1/campaigns", json: String(decoding: Fixtures.campaign(devices: tokens), as: UTF8.self))
        #expect(accepted?.status == 202)
        let body = try gateway.object(accepted)
        let id = try #require(body["id"]?.stringValue)
        #expect(accepted?.header("location") == "/v1/campaigns/\(id)")
        var status: JSONObject = JSONObject()
        _ = try await eventually(timeout: .seconds(60)) {
            status = try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)?per_page=10&page=3"))
            return status["status"] == .string("completed")
        }
        #expect(status["status"] == .string("completed"))
        let counts = try #require(status["counts"]?.objectValue)
        #expect(counts["delivered"] == .number("25"))
        #expect(counts["unregistered"] == .number("1"))
        #expect(counts["failed"] == .number("1"))
        #expect(counts["pending"] == .number("0"))
        let page = try #require(status["results"]?.arrayValue)
        #expect(page.count == 7)
        #expect(page.first?.objectValue?["index"] == .number("20"))
        let dead = page.compactMap(\.objectValue).first { $0["state"] == .string("unregistered") }
        #expect(dead?["timestamp_ms"] == .number("1700000000000"))
        #expect(gateway.sender.sent.withLock { Set($0) } == Set(tokens))
        let metrics = gateway.service.metrics.render()
        #expect(metrics.contains("pushgate_notifications_total{app=\"default\",push_type=\"alert\",result=\"delivered\",reason=\"\"} 25"))
        #expect(metrics.contains("pushgate_notifications_total{app=\"default\",push_type=\"alert\",result=\"failed\",reason=\"BadDeviceToken\"} 1"))
        #expect(gateway.request("GET", "/v1/campaigns/\(id)?per_page=5000")?.status == 400)
        #expect(gateway.request("GET", "/v1/campaigns/unknown")?.status == 404)
    }

    @Test func dryRunCampaignSendsNothing() async throws {
        let gateway = try LiveGateway()
        let body = Fixtures.campaign(devices: [Fixtures.token("a", 1)], extra: #","dry_run":true"#)
        let accepted = try gateway.object(gateway.request("POST", "/v1/campaigns", json: String(decoding: body, as: UTF8.self)))
        #expect(accepted["dry_run"] == .bool(true))
        let id = try #require(accepted["id"]?.stringValue)
        #expect(await gateway.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        let status = try gateway.object(gateway.request("GET", "/v1/campaigns/\(id)"))
        #expect(status["counts"]?.objectValue?["dry-run"] == .number("1"))
        #expect(gateway.sender.sent.withLock { $0.isEmpty })
    }

    @Test func authAndOpenEndpoints() throws {
        let key = "pg_live_key"
        let gateway = try LiveGateway(keys: [APIKey(name: "backend", sha256: APIKeyring.hash(key), rateLimit: RateLimit(perSecond: 0.001, burst: 2))])
        #expect(gateway.request("GET", "/v1/routes")?.status == 401)
        let auth = [("Authorization", "Bearer \(key)")]
        let routes = gateway.request("GET", "/v1/routes", headers: auth)
        #expect(routes?.status == 200)
        #expect(try gateway.object(routes)["hosts"] == .array([.string("example.com"), .string("www.example.com")]))
        #expect(try gateway.object(routes)["fingerprint"] == .string(Fixtures.routeTable().fingerprint))
        #expect(gateway.request("GET", "/v1/routes", headers: auth)?.status == 200)
        let limited = gateway.request("GET", "/v1/routes", headers: auth)
        #expect(limited?.status == 429)
        #expect(limited?.header("retry-after") != nil)
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/.well-known/apple-app-site-association"] {
            #expect(gateway.request("GET", path)?.status == 200, "\(path)")
        }
        let aasa = try #require(gateway.request("GET", "/.well-known/apple-app-site-association"))
        #expect(aasa.header("content-type") == "application/json")
        let applinks = try gateway.object(aasa)["applinks"]?.objectValue
        #expect(applinks?["details"]?.arrayValue?.first?.objectValue?["appIDs"] == .array([.string("A1B2C3D4E5.com.example.shop")]))
    }

    @Test func readinessReportsFailingChecks() throws {
        let gateway = try LiveGateway(readiness: [ReadinessCheck(name: "storage") { "not writable" }])
        let response = gateway.request("GET", "/readyz")
        #expect(response?.status == 503)
        #expect(try gateway.object(response)["checks"]?.objectValue?["storage"] == .string("not writable"))
    }

    /// Stopping finishes the sends in flight; the rest stays in the outbox and goes out
    /// when a dispatcher starts again on the same database.
    @Test func shutdownFinishesSendsInFlightAndKeepsTheRestQueued() async throws {
        let sender = ScriptedSender(delayNanoseconds: 300_000_000)
        let path = temporaryDatabasePath()
        var sentBeforeStop = 0
        do {
            let gateway = try LiveGateway(sender: sender, databasePath: path, inFlight: 4)
            let tokens = (0..<16).map { Fixtures.token("c", $0) }
            #expect(gateway.request("POST", "/v1/campaigns", json: String(decoding: Fixtures.campaign(devices: tokens), as: UTF8.self))?.status == 202)
            #expect(gateway.server.shutdown(deadlineSeconds: 5))
            #expect(gateway.dispatcher.stop(deadlineSeconds: 5))
            sentBeforeStop = sender.sent.withLock { $0.count }
            #expect(sentBeforeStop < 16)
            #expect(try gateway.storage.queueDepth() == 16 - sentBeforeStop)
        }
        let restarted = try LiveGateway(sender: sender, databasePath: path)
        #expect(await restarted.dispatcher.waitUntilIdle(deadlineSeconds: 20))
        #expect(sender.sent.withLock { $0.count } == 16)
        #expect(sender.sent.withLock { Set($0).count } == 16)
    }

    @Test func openAPIServersAreRelativeAndSecurityFollowsTheMode() throws {
        for keys in [[], [APIKey(name: "ci", sha256: APIKeyring.hash("k"))]] {
            let gateway = try LiveGateway(keys: keys)
            let response = try #require(gateway.request("GET", "/openapi.json"))
            let document = try gateway.object(response)
            #expect(document["servers"]?.arrayValue?.first?.objectValue?["url"] == .string("/"))
            let security = document["security"]?.arrayValue ?? []
            #expect(security.isEmpty == keys.isEmpty, "keys: \(keys.count), security: \(security)")
        }
    }

    @Test func theLinkCheckAnswerMatchesExactlyOneShape() throws {
        let document = try #require(try JSONParser().parse(OpenAPIDocument.text).objectValue)
        let schemas = document["components"]?.objectValue?["schemas"]?.objectValue
        let branches = schemas?["LinkResult"]?.objectValue?["oneOf"]?.arrayValue ?? []
        #expect(branches.count == 2)
        #expect(branches.allSatisfy { $0.objectValue?["additionalProperties"] == .bool(false) })
        let operation = document["paths"]?.objectValue?["/v1/links/check"]?.objectValue?["post"]?.objectValue
        let answers = operation?["responses"]?.objectValue?["200"]?.objectValue?["content"]?.objectValue?["application/json"]?
            .objectValue?["schema"]?.objectValue?["oneOf"]?.arrayValue ?? []
        let batch = answers.last?.objectValue
        // A single result has none of the batch's required members, and a batch has no `ok`.
        #expect(batch?["required"]?.arrayValue?.compactMap(\.stringValue) == ["results", "accepted", "rejected"])
        #expect(batch?["additionalProperties"] == .bool(false))
        let requests = operation?["requestBody"]?.objectValue?["content"]?.objectValue?["application/json"]?
            .objectValue?["schema"]?.objectValue?["oneOf"]?.arrayValue ?? []
        #expect(requests.allSatisfy { $0.objectValue?["additionalProperties"] == .bool(false) })
    }

    /// `PlainText`'s pattern refuses exactly the BMP characters `TextSafety.isUnsafe` does.
    @Test func thePlainTextPatternIsTheUnsafeCharacterRule() throws {
        let document = try #require(try JSONParser().parse(OpenAPIDocument.text).objectValue)
        let pattern = try #require(document["components"]?.objectValue?["schemas"]?.objectValue?["PlainText"]?.objectValue?["pattern"]?.stringValue)
        let regex = try NSRegularExpression(pattern: pattern)
        var disagreements: [String] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates
            let text = String(Character(scalar))
            let allowed = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            if allowed == TextSafety.isUnsafe(scalar) { disagreements.append(String(value, radix: 16)) }
        }
        #expect(disagreements.isEmpty, "U+\(disagreements.prefix(20).joined(separator: ", U+"))")
    }

    /// What the document's patterns for a path token and a cursor allow is what the server takes.
    @Test func pathTokensAndCursorsAreExactlyTheirPatterns() throws {
        let gateway = try LiveGateway()
        let token = String(repeating: "aB", count: 32)
        #expect(gateway.request("POST", "/v1/tokens/\(token)/register")?.status == 200)
        for separated in ["%3C\(token)%3E", "\(token.prefix(32))%20\(token.dropFirst(32))"] {
            #expect(gateway.request("POST", "/v1/tokens/\(separated)/register")?.status == 422, "\(separated)")
        }
        #expect(gateway.request("GET", "/v1/tokens/dead?cursor=123-ab")?.status == 200)
        for cursor in ["+5-ab", "1234567890123456789-ab", "-ab", "5-"] {
            #expect(gateway.request("GET", "/v1/tokens/dead?cursor=\(cursor)")?.status == 400, "\(cursor)")
        }
    }

    @Test func openAPIDescribesEveryRoute() throws {
        let document = try #require(try JSONParser().parse(OpenAPIDocument.text).objectValue)
        #expect(document["openapi"] == .string("3.1.0"))
        let paths = try #require(document["paths"]?.objectValue)
        let gateway = try LiveGateway()
        var described = Set<String>()
        for member in paths.members {
            for method in member.value.objectValue?.keys ?? [] { described.insert(method.uppercased() + " " + member.key) }
        }
        let routed = Set(gateway.service.router.entries.map { $0.method + " " + $0.pattern })
        #expect(described == routed)
    }
}
