import HTTPServer
import StrictJSON
import Synchronization
import Testing
import TestSupport
@testable import Gateway
import Timing

func makeService(keys: [APIKey] = [], clock: ManualClock = ManualClock(),
                 failedAuthenticationLimit: RateLimit = GatewayService.authFailureLimit) throws -> GatewayService {
    var builder = APIRouterBuilder()
    builder.add("GET", "/open", operation: "open", public: true) { _, _ in jsonResponse(Array("{}".utf8)) }
    builder.add("POST", "/v1/echo", operation: "echo") { request, _ throws(Problem) in
        jsonResponse(Array(JSONWriter.serialize(try JSONBody.decode(request)).utf8))
    }
    builder.add("GET", "/v1/items/{id}", operation: "item") { _, p in jsonResponse(Array("\"\(p["id"] ?? "")\"".utf8)) }
    builder.add("GET", "/v1/items/special", operation: "special") { _, _ in jsonResponse(Array("\"special\"".utf8)) }
    return GatewayService(router: try builder.build(), keyring: APIKeyring(keys), metrics: Metrics(),
                          log: RequestLog(fd: -1, clock: SystemClock()), clock: clock, failedAuthenticationLimit: failedAuthenticationLimit)
}

func problem(_ response: HTTPResponse) throws -> JSONObject {
    #expect(response.header("content-type") == "application/problem+json")
    return try #require(try JSONParser().parse(response.body).objectValue)
}

@Suite struct RouterTests {
    @Test func literalBeatsParameterAndCapturesValues() throws {
        let service = try makeService()
        #expect(String(decoding: service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/special")).body, as: UTF8.self) == "\"special\"")
        #expect(String(decoding: service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/42")).body, as: UTF8.self) == "\"42\"")
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() throws {
        let service = try makeService()
        let missing = service.respond(to: HTTPRequest(method: "GET", path: "/nope\u{202E}"))
        #expect(missing.status == 404)
        #expect(try problem(missing)["code"] == .string("notFound"))
        #expect(try problem(missing)["detail"]?.stringValue?.contains("\\u202e") == true)
        let wrong = service.respond(to: HTTPRequest(method: "DELETE", path: "/v1/echo"))
        #expect(wrong.status == 405)
        #expect(wrong.header("allow") == "POST")
    }

    @Test func conflictingPatternsFailAtBuild() {
        var builder = APIRouterBuilder()
        builder.add("GET", "/a/{x}", operation: "one") { _, _ in HTTPResponse(status: 200) }
        builder.add("GET", "/a/{y}", operation: "two") { _, _ in HTTPResponse(status: 200) }
        #expect(throws: APIRouter.ConflictError.self) { try builder.build() }
    }
}

@Suite struct BodyTests {
    @Test func jsonIsRequiredAndStrict() throws {
        let service = try makeService()
        let noType = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", body: Array("{}".utf8)))
        #expect(noType.status == 415)
        let json = [("content-type", "application/json; charset=utf-8")]
        let broken = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: Array("{\"a\":".utf8)))
        #expect(broken.status == 400)
        #expect(try problem(broken)["code"] == .string("malformedJSON"))
        #expect(try errorCodes(problem(broken)) == ["invalidJSON"])
        let duplicate = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: Array("{\"a\":1,\"a\":2}".utf8)))
        #expect(duplicate.status == 400)
        #expect(try errorCodes(problem(duplicate)) == ["duplicateKey"])
        let badUTF8 = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: [0x22, 0xFF, 0x22]))
        #expect(try errorCodes(problem(badUTF8)) == ["invalidUTF8"])
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let tooDeep = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: Array(deep.utf8)))
        #expect(try errorCodes(problem(tooDeep)) == ["tooDeep"])
        let fine = service.respond(to: HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: Array("{\"b\":[1]}".utf8)))
        #expect(fine.status == 200)
    }
}

@Suite struct AuthTests {
    static let key = "pg_test_key_1"

    @Test func keysAreRequiredWhenConfigured() throws {
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))])
        let missing = service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1"))
        #expect(missing.status == 401)
        #expect(missing.header("www-authenticate")?.hasPrefix("Bearer") == true)
        let wrong = service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1", headers: [("authorization", "Bearer nope")]))
        #expect(wrong.status == 401)
        let basic = service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1", headers: [("authorization", "Basic eDp5")]))
        #expect(basic.status == 401)
        let right = service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1", headers: [("authorization", "Bearer \(Self.key)")]))
        #expect(right.status == 200)
        let open = service.respond(to: HTTPRequest(method: "GET", path: "/open"))
        #expect(open.status == 200)
    }

    @Test func hashIsSHA256Hex() {
        #expect(APIKeyring.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func rateLimitAnswers429WithRetryAfterAndRefills() throws {
        let clock = ManualClock()
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key),
                                                    rateLimit: RateLimit(perSecond: 1, burst: 2))], clock: clock)
        let request = HTTPRequest(method: "GET", path: "/v1/items/1", headers: [("authorization", "Bearer \(Self.key)")])
        #expect(service.respond(to: request).status == 200)
        #expect(service.respond(to: request).status == 200)
        let limited = service.respond(to: request)
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "1")
        clock.advance(seconds: 1.0)
        #expect(service.respond(to: request).status == 200)
    }
}

@Suite struct FailedLoginTests {
    static let key = "pg_test_key_1"

    func attempt(_ service: GatewayService, _ authorization: String, from address: String = "192.0.2.7") -> HTTPResponse {
        service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1", headers: [("authorization", authorization)],
                                        remoteAddress: address))
    }

    @Test func aBurstOfFailuresFromOneAddressIsAnswered429UntilItRefills() throws {
        let clock = ManualClock()
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))], clock: clock)
        for _ in 0..<10 { #expect(attempt(service, "Bearer guess").status == 401) }
        let limited = attempt(service, "Bearer guess")
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "6")
        // The right key is still let in: only wrong keys are throttled.
        #expect(attempt(service, "Bearer \(Self.key)").status == 200)
        // Other addresses are not affected, and a missing header is not a guess.
        #expect(attempt(service, "Bearer \(Self.key)", from: "192.0.2.8").status == 200)
        #expect(service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1", remoteAddress: "192.0.2.9")).status == 401)
        clock.advance(seconds: 6)
        #expect(attempt(service, "Bearer \(Self.key)").status == 200)
        #expect(attempt(service, "Basic eDp5").status == 401)
        #expect(attempt(service, "Bearer guess").status == 429)
    }

    @Test func theFailedAuthenticationLimitIsTheOperators() throws {
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))],
                                      failedAuthenticationLimit: RateLimit(perSecond: 1, burst: 3))
        let answers = (0..<5).map { _ in attempt(service, "Bearer guess").status }
        #expect(answers == [401, 401, 401, 429, 429])
        func read(_ text: String) throws -> (ServerSettings, ConfigReader) {
            var reader = ConfigReader(file: "gateway.json")
            let settings = ServerSettings(try JSONParser().parse(Array(text.utf8)), reader: &reader)
            return (settings, reader)
        }
        let (settings, reader) = try read(#"{"failedAuthenticationLimit": {"perSecond": 2, "burst": 50}}"#)
        #expect(reader.diagnostics.isEmpty, "\(reader.diagnostics)")
        #expect(settings.failedAuthenticationLimit == RateLimit(perSecond: 2, burst: 50))
        #expect(try read("{}").0.failedAuthenticationLimit == GatewayService.authFailureLimit)
        let (_, bad) = try read(#"{"failedAuthenticationLimit": {"burst": 5}}"#)
        #expect(bad.diagnostics.map(\.code) == [.missing], "\(bad.diagnostics)")
    }

    /// Twenty wrong keys, then the right one from the same address: served.
    @Test func aRightKeyIsNeverRefusedForOtherCallersFailures() throws {
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))])
        let answers = (0..<20).map { _ in attempt(service, "Bearer guess").status }
        #expect(answers.prefix(10).allSatisfy { $0 == 401 } && answers.dropFirst(10).allSatisfy { $0 == 429 }, "\(answers)")
        #expect(attempt(service, "Bearer \(Self.key)").status == 200)
        #expect(attempt(service, "Bearer \(Self.key)").status == 200)
        #expect(attempt(service, "Bearer guess").status == 429)
    }

    @Test func twoAuthorizationHeadersAre400() throws {
        let service = try makeService(keys: [APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))])
        let response = service.respond(to: HTTPRequest(method: "GET", path: "/v1/items/1",
                                                       headers: [("authorization", "Bearer \(Self.key)"), ("authorization", "Bearer x")]))
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("duplicateAuthorization"))
    }

    @Test func addressesBeyondTheTableLimitAreForgottenOnceRefilled() {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock, maxEntries: 100)
        let limit = RateLimit(perSecond: 1, burst: 2)
        for i in 0..<1000 {
            _ = limiter.take(key: "a\(i)", limit: limit)
            clock.advance(seconds: 0.1)
            #expect(limiter.entries <= 101)
        }
        // Still limited addresses are kept while refilled ones go.
        _ = limiter.take(key: "busy", limit: limit)
        _ = limiter.take(key: "busy", limit: limit)
        #expect(limiter.check(key: "busy", limit: limit) != .allowed)
    }
}

@Suite struct ObservabilityTests {
    @Test func metricsCountRequestsByOperationAndStatus() throws {
        let service = try makeService()
        _ = service.respond(to: HTTPRequest(method: "GET", path: "/open"))
        _ = service.respond(to: HTTPRequest(method: "GET", path: "/missing"))
        service.metrics.recordLinkRejected(app: "default", code: "hostNotAllowed")
        service.metrics.recordAPNsLatencies(app: "default", pushType: "alert", seconds: [0.02])
        let text = service.metrics.render()
        #expect(text.contains("pushgate_http_requests_total{operation=\"open\",status=\"200\"} 1"))
        #expect(text.contains("pushgate_http_requests_total{operation=\"unmatched\",status=\"404\"} 1"))
        #expect(text.contains("pushgate_links_rejected_total{app=\"default\",code=\"hostNotAllowed\"} 1"))
        #expect(text.contains("pushgate_apns_request_duration_seconds_bucket{app=\"default\",push_type=\"alert\",le=\"0.025\"} 1"))
        #expect(text.contains("pushgate_apns_request_duration_seconds_bucket{app=\"default\",push_type=\"alert\",le=\"0.01\"} 0"))
        #expect(text.contains("pushgate_apns_request_duration_seconds_count{app=\"default\",push_type=\"alert\"} 1"))
    }

    @Test func logShortensDeviceTokens() {
        let token = TestTokens.device
        #expect(RequestLog.redactedPath("/v1/tokens/\(token)/register") == "/v1/tokens/abababab…/register")
        #expect(RequestLog.redactedPath("/v1/campaigns/c1") == "/v1/campaigns/c1")
    }

    @Test func timestampsAreRFC3339() {
        #expect(rfc3339(0) == "1970-01-01T00:00:00.000Z")
        #expect(rfc3339(1_796_000_000.5) == "2026-11-30T00:53:20.500Z")
    }
}

@Suite struct LinkBatchTests {
    @Test func anOversizedBatchIsOneErrorNotOnePerItem() throws {
        let body = "{\"links\":[" + Array(repeating: "1", count: 5000).joined(separator: ",") + "]}"
        let json = try JSONParser().parse(body)
        let problem = try #require(throws: Problem.self) { try LinkEndpoints.parseLinks(json) }
        #expect(problem.errors == [Diagnostic(.invalidBatchSize, at: .pointer(.root.appending("links")), "expected 1 to 1000 links, got 5000")])
    }
}

/// The code of each entry of a problem's `errors`, in order.
func errorCodes(_ problem: JSONObject) -> [String] {
    (problem["errors"]?.arrayValue ?? []).compactMap { $0.objectValue?["code"]?.stringValue }
}
