#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HTTPServer
import StrictJSON
import Testing
import TestSupport
@testable import Gateway

/// What a hostile client tried against the newest endpoints, each against a live server:
/// DNS rebinding in keyless mode, a second `Idempotency-Key`, Live Activity alerts and
/// collapse ids that are not plain text, an NDJSON campaign whose body cannot be built,
/// HEAD, query strings, the JSON request log and the probes' details.
@Suite struct HostileClientTests {
    static let token = TestTokens.device

    func problem(_ response: RawResponse?) throws -> (status: Int, code: String?, errors: [JSONObject]) {
        let response = try #require(response)
        #expect(response.header("content-type") == "application/problem+json")
        let object = try #require(try JSONParser().parse(response.body).objectValue)
        return (response.status, object["code"]?.stringValue, (object["errors"]?.arrayValue ?? []).compactMap(\.objectValue))
    }

    func campaignCount(_ gateway: LiveGateway) throws -> Int {
        let list = try gateway.object(gateway.request("GET", "/v1/campaigns"))
        return list["campaigns"]?.arrayValue?.count ?? -1
    }

    // MARK: DNS rebinding

    @Test func keylessModeServesOnlyLoopbackHostsAndOrigins() throws {
        let gateway = try LiveGateway()
        let port = gateway.port
        let campaign = String(decoding: Fixtures.campaign(devices: [Self.token]), as: UTF8.self)
        // The attack from the review: a rebound name, its page's origin, a campaign.
        for headers in [[("Host", "attacker.example:\(port)")],
                        [("Host", "attacker.example:\(port)"), ("Origin", "https://attacker.example")],
                        [("Host", "127.0.0.1:\(port)"), ("Origin", "https://attacker.example")],
                        [("Host", "127.0.0.1:\(port)"), ("Origin", "null")],
                        [("Host", "127.0.0.1:\(port)"), ("Origin", "http://127.0.0.1.attacker.example")],
                        [("Host", "localhost.attacker.example")], [("Host", "127.0.0.1:1")], [("Host", "127.1")],
                        [("Host", "0177.0.0.1")], [("Host", "[::ffff:127.0.0.1]")], [("Host", "127.0.0.1:\(port)x")]] {
            let answer = try problem(gateway.request("POST", "/v1/campaigns", json: campaign, headers: headers))
            #expect(answer.status == 403, "\(headers)")
            #expect(answer.code == "foreignRequest", "\(headers)")
            let error = try #require(answer.errors.first)
            let header = headers.contains { $0.0 == "Origin" } && headers[0].1.hasPrefix("127.") ? "Origin" : "Host"
            #expect(error["header"]?.stringValue == header, "\(headers)")
            #expect(error["code"]?.stringValue == (header == "Host" ? "foreignHost" : "foreignOrigin"), "\(headers)")
            let listed = try problem(gateway.request("GET", "/v1/campaigns", headers: headers))
            #expect(listed.status == 403, "\(headers)")
        }
        #expect(try campaignCount(gateway) == 0, "nothing was created")
        // This machine's programs and the same-origin /ui page.
        for headers in [[("Host", "127.0.0.1:\(port)")], [("Host", "localhost:\(port)")], [("Host", "LOCALHOST")],
                        [("Host", "127.0.0.2")], [("Host", "[::1]:\(port)")],
                        [("Host", "127.0.0.1:\(port)"), ("Origin", "http://127.0.0.1:\(port)")],
                        [("Host", "localhost:\(port)"), ("Origin", "http://localhost:3000")],
                        [("Host", "[::1]:\(port)"), ("Origin", "https://[::1]")]] {
            #expect(gateway.request("POST", "/v1/campaigns", json: campaign, headers: headers)?.status == 202, "\(headers)")
        }
        #expect(try campaignCount(gateway) == 8)
        // The AASA is the public file the Host chooses: any Host, but not for a foreign page.
        let aasa = "/.well-known/apple-app-site-association"
        #expect(gateway.request("GET", aasa, headers: [("Host", "example.com")])?.status == 200)
        #expect(try problem(gateway.request("GET", aasa, headers: [("Host", "example.com"), ("Origin", "https://attacker.example")])).status == 403)
        // With keys, the key is the guard (and a proxy may pass any Host).
        let keyed = try LiveGateway(keys: [APIKey(name: "ops", sha256: APIKeyring.hash("secret"), isAdmin: true)])
        let withKey = keyed.request("GET", "/v1/campaigns", headers: [("Host", "gateway.example.com"), ("Origin", "https://console.example.com"),
                                                                      ("Authorization", "Bearer secret")])
        #expect(withKey?.status == 200)
    }

    /// A proxy on this machine in front of a keyless gateway would carry anyone's
    /// requests with a loopback `Host`: what a proxy passed on is refused, and a
    /// configuration that trusts a proxy without keys does not start.
    @Test func keylessModeRefusesWhatAProxyPassedOn() throws {
        let gateway = try LiveGateway()
        let host = ("Host", "127.0.0.1:\(gateway.port)")
        for (name, value) in [("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=203.0.113.9"), ("Via", "1.1 h2o")] {
            let answer = try problem(gateway.request("GET", "/v1/campaigns", headers: [host, (name, value)]))
            #expect(answer.status == 403 && answer.code == "foreignRequest", "\(name)")
            #expect(answer.errors.first?["code"]?.stringValue == "proxiedRequest", "\(name)")
            #expect(answer.errors.first?["header"]?.stringValue == name)
        }
        #expect(gateway.request("GET", "/.well-known/apple-app-site-association", headers: [("Host", "example.com"), ("Via", "1.1 cdn")])?.status == 200)
        var settings = ServerSettings()
        #expect(settings.exposureProblem == nil)
        settings.trustedProxies = TrustedProxies([try IPAddressRange.parse("127.0.0.1").get()])
        #expect(settings.exposureProblem?.contains("trustedProxies") == true)
        settings.apiKeys = [APIKey(name: "ops", sha256: APIKeyring.hash("secret"))]
        #expect(settings.exposureProblem == nil)
    }

    @Test func theLoopbackRulesReadHostsStrictly() {
        #expect(LoopbackOnly.isLoopbackAuthority("127.0.0.1", port: 8080))
        #expect(LoopbackOnly.isLoopbackAuthority("127.255.0.9:8080", port: 8080))
        #expect(LoopbackOnly.isLoopbackAuthority("[0:0:0:0:0:0:0:1]:8080", port: 8080))
        #expect(!LoopbackOnly.isLoopbackAuthority("127.0.0.1:8081", port: 8080))
        #expect(!LoopbackOnly.isLoopbackAuthority("127.0.0.1:", port: 8080))
        #expect(!LoopbackOnly.isLoopbackAuthority("127.0.0.256", port: nil))
        #expect(!LoopbackOnly.isLoopbackAuthority("128.0.0.1", port: nil))
        #expect(!LoopbackOnly.isLoopbackAuthority("localhost.", port: nil))
        #expect(!LoopbackOnly.isLoopbackAuthority("::1", port: nil))
        #expect(!LoopbackOnly.isLoopbackAuthority("[::1", port: nil))
        #expect(!LoopbackOnly.isLoopbackAuthority("", port: nil))
        // One spelling of each address: no short forms, leading zeros, spaces or IPv4-mapped IPv6.
        for host in ["127.1", "127.01.0.1", "0177.0.0.1", " 127.0.0.1", "127.0.0.1 ", "[::ffff:127.0.0.1]", "[::1%lo]", "[::2]"] {
            #expect(!LoopbackOnly.isLoopbackAuthority(host, port: nil), "\(host)")
        }
        #expect(!LoopbackOnly.isLoopbackOrigin("http://localhost/path"))
        #expect(!LoopbackOnly.isLoopbackOrigin("file://"))
        #expect(LoopbackOnly.isLoopbackOrigin("http://localhost:5173"))
    }

    // MARK: Idempotency-Key

    @Test func twoIdempotencyKeysAreRefusedLikeTwoHosts() throws {
        let gateway = try LiveGateway()
        let campaign = String(decoding: Fixtures.campaign(devices: [Self.token]), as: UTF8.self)
        let answer = try problem(gateway.request("POST", "/v1/campaigns", json: campaign,
                                                 headers: [("Idempotency-Key", "first"), ("Idempotency-Key", "second")]))
        #expect(answer.status == 400)
        #expect(answer.code == "malformedRequest")
        #expect(answer.errors.first?["code"]?.stringValue == "duplicateIdempotencyKey")
        #expect(answer.errors.first?["header"]?.stringValue == "Idempotency-Key")
        #expect(try campaignCount(gateway) == 0)
        // On a kept-alive connection too, and nothing after it runs.
        let client = try #require(RawHTTPClient(port: gateway.port))
        let body = Array(campaign.utf8)
        client.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + "POST /v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: a\r\n"
            + "Idempotency-Key: a\r\nContent-Length: \(body.count)\r\n\r\n" + campaign)
        let (data, closed) = client.readUntilClose(seconds: 5)
        #expect(closed)
        let first = try #require(RawResponse(parsing: data))
        #expect(first.status == 200)
        let second = try problem(RawResponse(parsing: Array(data.dropFirst(first.length))))
        #expect(second.status == 400)
        #expect(second.errors.first?["code"]?.stringValue == "duplicateIdempotencyKey")
        #expect(try campaignCount(gateway) == 0)
    }

    // MARK: Live Activity alerts and collapse ids

    @Test func aLiveActivityAlertIsPlainText() throws {
        let gateway = try LiveGateway()
        let registered = gateway.request("POST", "/v1/live-activities/tokens",
                                         json: #"{"kind": "update", "activity_id": "A-1", "token": "\#(Self.token)"}"#)
        #expect(registered?.status == 201)
        for (member, text) in [("title", #"line\r\nbreak"#), ("title", ""), ("title", #"nul\u0000"#), ("title", #"\u202Eevil"#),
                               ("body", #"a\nb"#), ("body", ""), ("body", #"\u2066x"#)] {
            let alert = member == "title" ? #"{"title": "\#(text)", "body": "Now"}"# : #"{"title": "Order", "body": "\#(text)"}"#
            let body = #"{"alert": \#(alert), "live_activity": {"content_state": {"eta": 5}}}"#
            let answer = try problem(gateway.request("POST", "/v1/live-activities/A-1/update", json: body))
            #expect(answer.status == 422, "\(member) \(text)")
            #expect(answer.errors.contains { $0["pointer"]?.stringValue == "/alert/\(member)" && $0["code"]?.stringValue == "invalidValue" },
                    "\(member) \(text): \(answer.errors)")
            // The same campaign through POST /v1/campaigns, with the token as its device.
            let campaign = #"{"push_type": "liveactivity", "alert": \#(alert), "live_activity": {"event": "update", "content_state": {"eta": 5}}, "devices": ["\#(Self.token)"]}"#
            #expect(gateway.request("POST", "/v1/campaigns", json: campaign)?.status == 422, "\(member) \(text)")
        }
        let good = gateway.request("POST", "/v1/live-activities/A-1/update",
                                   json: #"{"alert": {"title": "Order", "body": "On the way"}, "live_activity": {"content_state": {"eta": 5}}}"#)
        #expect(good?.status == 202)
        // An ordinary alert keeps its line breaks.
        let multiline = #"{"alert": {"title": "Hi", "body": "two\nlines"}, "deeplink": "https://example.com/product/42", "devices": ["\#(Self.token)"]}"#
        #expect(gateway.request("POST", "/v1/campaigns", json: multiline)?.status == 202)
    }

    @Test func aCollapseIdHasNoWhitespaceAtItsEnds() throws {
        let gateway = try LiveGateway()
        for id in [" ", "   ", " x", "x ", "\u{A0}x", "x\u{3000}"] {
            let body = #"{"alert": {"body": "Hi"}, "collapse_id": "\#(id)", "devices": ["\#(Self.token)"]}"#
            for path in ["/v1/notifications/preview", "/v1/campaigns"] {
                let answer = try problem(gateway.request("POST", path, json: body))
                #expect(answer.status == 422, "\(path) '\(id)'")
                #expect(answer.errors.first?["pointer"]?.stringValue == "/collapse_id", "\(path) '\(id)'")
                #expect(answer.errors.first?["code"]?.stringValue == "invalidValue", "\(path) '\(id)'")
            }
        }
        let inside = #"{"alert": {"body": "Hi"}, "collapse_id": "score update", "devices": ["\#(Self.token)"]}"#
        let preview = try #require(gateway.request("POST", "/v1/notifications/preview", json: inside))
        #expect(preview.status == 200)
        #expect(preview.bodyText.contains("score update"))
    }

    // MARK: NDJSON

    @Test func anNDJSONCampaignWhoseBodyIsTooLargeIsRefusedAtOnceLikeJSON() throws {
        let gateway = try LiveGateway()
        let long = String(repeating: "x", count: 5000)
        let header = #"{"alert": {"title": "Hi", "body": "\#(long)"}, "deeplink": "https://example.com/product/42"}"#
        let lines = header + "\n" + (0..<3).map { Fixtures.token("ab", $0) }.joined(separator: "\n") + "\n"
        let streamed = try problem(RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns",
                                                          headers: [("Host", "127.0.0.1"), ("Content-Type", "application/x-ndjson")],
                                                          body: Array(lines.utf8)))
        #expect(streamed.status == 422)
        #expect(streamed.code == "validationFailed")
        #expect(streamed.errors.map { $0["code"]?.stringValue } == ["payloadTooLarge"])
        let json = #"{"alert": {"title": "Hi", "body": "\#(long)"}, "deeplink": "https://example.com/product/42", "devices": ["\#(Self.token)"]}"#
        let whole = try problem(gateway.request("POST", "/v1/campaigns", json: json))
        #expect(whole.status == 422)
        #expect(whole.errors.map { $0["code"]?.stringValue } == ["payloadTooLarge"])
        #expect(try campaignCount(gateway) == 0)
        // With truncate it fits, and is accepted.
        let fits = #"{"alert": {"title": "Hi", "body": "\#(long)"}, "truncate": true, "deeplink": "https://example.com/product/42"}"#
        let accepted = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns",
                                              headers: [("Host", "127.0.0.1"), ("Content-Type", "application/x-ndjson")],
                                              body: Array((fits + "\n" + Self.token + "\n").utf8))
        #expect(accepted?.status == 202)
    }

    // MARK: HEAD

    @Test func headIsServedWhereverGetIs() throws {
        let gateway = try LiveGateway()
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/v1/campaigns", "/v1/routes", "/ui", "/v1/apps"] {
            let get = try #require(gateway.request("GET", path))
            let client = try #require(RawHTTPClient(port: gateway.port))
            // HEAD, then GET on the same connection: the HEAD answer has no body, or the
            // GET answer would not start right after its head.
            client.send("HEAD \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let (data, closed) = client.readUntilClose(seconds: 5)
            #expect(closed)
            let text = String(decoding: data, as: UTF8.self)
            let headEnd = try #require(text.range(of: "\r\n\r\n"), "\(path): \(text)")
            let head = text[..<headEnd.lowerBound]
            #expect(head.hasPrefix("HTTP/1.1 \(get.status) "), "\(path): \(head)")
            if path != "/metrics" {  // the counters move between the two requests
                #expect(head.lowercased().contains("content-length: \(get.body.count)"), "\(path): \(head)")
            }
            #expect(head.lowercased().contains("content-type: \(get.header("content-type")?.lowercased() ?? "")"), "\(path)")
            #expect(text[headEnd.upperBound...].hasPrefix("HTTP/1.1 200 "), "\(path): a body followed the HEAD answer")
        }
        // A path without GET: 405 naming its methods (the answer has no body either).
        let client = try #require(RawHTTPClient(port: gateway.port))
        client.send("HEAD /v1/links/check HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let postOnly = String(decoding: client.readUntilClose(seconds: 5).bytes, as: UTF8.self)
        #expect(postOnly.hasPrefix("HTTP/1.1 405 "), "\(postOnly)")
        #expect(postOnly.contains("Allow: POST\r\n"), "\(postOnly)")
        #expect(postOnly.hasSuffix("\r\n\r\n"), "no body: \(postOnly)")
        let wrongMethod = try #require(gateway.request("DELETE", "/healthz"))
        #expect(wrongMethod.header("allow") == "GET, HEAD")
    }

    // MARK: Query strings

    @Test func oneRuleForQueryParametersOnEveryEndpoint() throws {
        let gateway = try LiveGateway()
        // Unknown: refused everywhere, also where the endpoint takes none.
        for (method, path) in [("GET", "/healthz"), ("GET", "/v1/apps"), ("GET", "/openapi.json"), ("GET", "/v1/routes"),
                               ("GET", "/v1/templates"), ("POST", "/v1/links/check"), ("GET", "/v1/campaigns"),
                               ("GET", "/v1/tokens/dead"), ("GET", "/.well-known/apple-app-site-association")] {
            let answer = try problem(gateway.request(method, path + "?colour=red", json: method == "POST" ? #"{"link": "x"}"# : nil))
            #expect(answer.status == 400 && answer.code == "invalidQuery", "\(path)")
            #expect(answer.errors.map { $0["code"]?.stringValue } == ["unknownParameter"], "\(path)")
            #expect(answer.errors.first?["parameter"]?.stringValue == "colour", "\(path)")
        }
        // Repeated: refused, never silently collapsed.
        for query in ["/v1/campaigns?limit=1&limit=2", "/v1/tokens/dead?since=1&since=1",
                      "/v1/campaigns/00000000-0000-0000-0000-000000000000?state=failed&state=failed"] {
            let answer = try problem(gateway.request("GET", query))
            #expect(answer.status == 400 && answer.code == "invalidQuery", "\(query)")
            #expect(answer.errors.map { $0["code"]?.stringValue } == ["duplicateParameter"], "\(query)")
        }
        // A whole number is plain digits: `+5` (a space and 5) and `%2B5` ("+5") alike.
        for value in ["+5", "%2B5", "%205", "5%20", "-0", "0x5", "5.0"] {
            let answer = try problem(gateway.request("GET", "/v1/campaigns?limit=\(value)"))
            #expect(answer.status == 400, "\(value)")
            #expect(answer.errors.map { $0["code"]?.stringValue } == ["invalidValue"], "\(value)")
        }
        #expect(gateway.request("GET", "/v1/campaigns?limit=5")?.status == 200)
        #expect(gateway.request("GET", "/v1/campaigns?limit=005")?.status == 200)
        #expect(gateway.request("GET", "/v1/campaigns?before=9223372036854775807")?.status == 200)
        #expect(gateway.request("GET", "/v1/campaigns?before=9223372036854775808")?.status == 400, "over Int64")
        #expect(gateway.request("GET", "/v1/campaigns/00000000-0000-0000-0000-000000000000?state=failed,unregistered")?.status == 404)
    }

    /// The table of query parameters and the OpenAPI document agree, operation by operation.
    @Test func theDocumentDeclaresTheQueryParametersEachOperationTakes() throws {
        let document = try JSONParser().parse(OpenAPIDocument.text)
        let paths = try #require(document.objectValue?["paths"]?.objectValue)
        var declared: [String: Set<String>] = [:]
        for path in paths.members {
            for operation in path.value.objectValue?.members ?? [] {
                guard var id = operation.value.objectValue?["operationId"]?.stringValue else { continue }
                if id.hasPrefix("apps.") { id = String(id.dropFirst(5)) }
                let names = (operation.value.objectValue?["parameters"]?.arrayValue ?? []).compactMap { parameter -> String? in
                    guard let object = parameter.objectValue else { return nil }
                    if let reference = object["$ref"]?.stringValue {
                        let name = String(reference.split(separator: "/").last ?? "")
                        let resolved = document.objectValue?["components"]?.objectValue?["parameters"]?.objectValue?[name]?.objectValue
                        return resolved?["in"]?.stringValue == "query" ? resolved?["name"]?.stringValue : nil
                    }
                    return object["in"]?.stringValue == "query" ? object["name"]?.stringValue : nil
                }
                declared[id, default: []].formUnion(names)
            }
        }
        for (operation, names) in declared {
            #expect(names == Set(QueryParameters.taken[operation] ?? []), "\(operation)")
        }
        for operation in QueryParameters.taken.keys {
            #expect(declared[operation] != nil, "\(operation) is not in the document")
        }
    }

    // MARK: The request log

    @Test func theJSONRequestLogDecodesToNoRawControlOrBidiCharacter() throws {
        let captured = CapturedLog()
        let gateway = try LiveGateway(log: captured.log)
        let client = try #require(RawHTTPClient(port: gateway.port))
        client.send("GET /v1/%1B%5B31mred%0D%0Aforged%E2%80%AE%C2%9B?q=%1B%5D0%3Btitle%07%E2%81%A6 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "User-Agent: probe \u{202E}\u{0085}x\r\nConnection: close\r\n\r\n")
        #expect(client.readResponse()?.status == 404)
        let deadline = Date().addingTimeInterval(5)
        var lines: [String] = []
        while lines.isEmpty && Date() < deadline {
            lines = captured.lines()
            if lines.isEmpty { usleep(20_000) }
        }
        let line = try #require(lines.first)
        let object = try #require(try JSONParser().parse(line).objectValue)
        for member in ["path", "query", "user_agent"] {
            let value = try #require(object[member]?.stringValue, "\(member)")
            let unsafe = value.unicodeScalars.filter { TextSafety.isUnsafe($0) || $0 == "\r" || $0 == "\n" }
            #expect(unsafe.isEmpty, "\(member) decodes to \(unsafe.map { String($0.value, radix: 16) })")
        }
        #expect(object["path"]?.stringValue?.contains("\\u001b[31mred\\u000d\\u000aforged\\u202e\\u009b") == true, "\(line)")
        #expect(object["query"]?.stringValue?.contains("q=\\u001b]0;title\\u0007\\u2066") == true, "\(line)")
        #expect(object["user_agent"]?.stringValue == "probe \\u202e\\u0085x", "\(line)")
    }

    // MARK: The probes' details

    @Test func privateProbesNeedAnAdminKey() throws {
        let admin = APIKey(name: "ops", sha256: APIKeyring.hash("admin-secret"), isAdmin: true)
        let client = APIKey(name: "shop", sha256: APIKeyring.hash("client-secret"), apps: ["default"])
        let closed = try LiveGateway(keys: [admin, client], privateProbes: true)
        for path in ["/metrics", "/readyz"] {
            #expect(closed.request("GET", path)?.status == 401, "\(path)")
            #expect(closed.request("GET", path, headers: [("Authorization", "Bearer client-secret")])?.status == 404, "\(path)")
            #expect(closed.request("GET", path, headers: [("Authorization", "Bearer admin-secret")])?.status == 200, "\(path)")
        }
        #expect(closed.request("GET", "/healthz")?.status == 200, "liveness stays open")
        let document = try #require(closed.request("GET", "/openapi.json"))
        #expect(document.bodyText.contains("Needs an admin key (server.privateProbes)"))
        // The default: open, and documented as naming the apps.
        let open = try LiveGateway(keys: [admin, client])
        #expect(open.request("GET", "/metrics")?.status == 200)
        #expect(open.request("GET", "/readyz")?.status == 200)
        #expect(try #require(open.request("GET", "/openapi.json")).bodyText.contains("server.privateProbes keeps them behind an admin key"))
    }
}
