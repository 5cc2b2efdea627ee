import HTTPServer
import StrictJSON
import Testing
import TestSupport
@testable import Gateway
import Timing

/// The service behind a trusted proxy: the forwarded client is the one throttled and
/// logged; the proxy is logged as `peer`.
@Suite struct TrustedProxyServiceTests {
    static let key = "0123456789abcdef0123456789abcdef"

    func service(_ log: RequestLog, format: RequestLog.Format = .json) throws -> GatewayService {
        var builder = APIRouterBuilder()
        builder.add("GET", "/open", operation: "open", public: true) { _, _ in jsonResponse(Array("{}".utf8)) }
        builder.add("GET", "/v1/items", operation: "items") { _, _ in jsonResponse(Array("[]".utf8)) }
        guard case .success(let proxies) = IPAddressRange.parse("10.0.0.0/8") else { throw Failure() }
        guard case .success(let v6) = IPAddressRange.parse("fd00::/8") else { throw Failure() }
        return GatewayService(router: try builder.build(), keyring: APIKeyring([APIKey(name: "ci", sha256: APIKeyring.hash(Self.key))]),
                              metrics: Metrics(), log: log, clock: ManualClock(), trustedProxies: TrustedProxies([proxies, v6]))
    }

    struct Failure: Error {}

    func get(_ service: GatewayService, from peer: String, key: String, _ headers: [(String, String)] = []) -> HTTPResponse {
        service.respond(to: HTTPRequest(method: "GET", path: "/v1/items",
                                        headers: [("authorization", "Bearer \(key)")] + headers.map { (name: $0.0, value: $0.1) },
                                        remoteAddress: peer))
    }

    @Test func failuresAreCountedPerForwardedClient() throws {
        let service = try service(RequestLog(fd: -1, clock: SystemClock()))
        let a = [("x-forwarded-for", "203.0.113.1")]
        let b = [("x-forwarded-for", "203.0.113.2")]
        let wrong = (0..<12).map { _ in get(service, from: "10.0.0.1", key: "guess", a).status }
        #expect(wrong == Array(repeating: 401, count: 10) + [429, 429])
        // Another client through the same proxy: its wrong key is its own first failure.
        #expect(get(service, from: "10.0.0.1", key: "guess", b).status == 401)
        // And right keys are served for both, and for the proxy itself.
        #expect(get(service, from: "10.0.0.1", key: Self.key, b).status == 200)
        #expect(get(service, from: "10.0.0.1", key: Self.key, a).status == 200)
        #expect(get(service, from: "10.0.0.1", key: Self.key).status == 200)
        // A forged header from an untrusted peer names nobody: its failures are the peer's.
        for _ in 0..<10 { _ = get(service, from: "192.0.2.50", key: "guess", [("x-forwarded-for", "203.0.113.99")]) }
        #expect(get(service, from: "192.0.2.50", key: "guess", [("x-forwarded-for", "203.0.113.77")]).status == 429)
        #expect(get(service, from: "10.0.0.1", key: "guess", [("x-forwarded-for", "203.0.113.99")]).status == 401,
                "203.0.113.99 was never charged")
    }

    @Test func theLogNamesClientAndPeer() throws {
        let captured = CapturedLog()
        let service = try service(captured.log)
        _ = get(service, from: "fd00::7", key: Self.key, [("forwarded", #"for="[2001:db8::1]:4711""#)])
        _ = get(service, from: "192.0.2.50", key: Self.key, [("x-forwarded-for", "203.0.113.99")])
        let lines = captured.lines()
        try #require(lines.count == 2)
        let proxied = try #require(try JSONParser().parse(lines[0]).objectValue)
        #expect(proxied["client"]?.stringValue == "2001:db8::1")
        #expect(proxied["peer"]?.stringValue == "fd00::7")
        let direct = try #require(try JSONParser().parse(lines[1]).objectValue)
        #expect(direct["client"]?.stringValue == "192.0.2.50")
        #expect(direct["peer"] == nil)
        #expect(!lines[1].contains("203.0.113.99"), "a forged header is never logged as the client")

        let text = CapturedLog(format: .text)
        _ = get(try self.service(text.log, format: .text), from: "10.9.9.9", key: Self.key, [("x-forwarded-for", "198.51.100.4")])
        let line = try #require(text.lines().first)
        #expect(line.hasSuffix(" client=198.51.100.4 peer=10.9.9.9"), "\(line)")
    }

    @Test func malformedForwardingFromATrustedPeerIs400() throws {
        let captured = CapturedLog()
        let service = try service(captured.log)
        let response = get(service, from: "10.0.0.1", key: Self.key, [("x-forwarded-for", "203.0.113.1, bogus\u{202E}")])
        #expect(response.status == 400)
        let body = try problem(response)
        #expect(body["code"]?.stringValue == "invalidHeader")
        let error = try #require(body["errors"]?.arrayValue?.first?.objectValue)
        #expect(error["code"]?.stringValue == "invalidForwarding")
        #expect(error["header"]?.stringValue == "X-Forwarded-For")
        #expect(error["detail"]?.stringValue?.hasPrefix("element 2: \"bogus\\u{202e}\" is not an IP address") == true,
                "\(error["detail"]?.stringValue ?? "")")
        // The open endpoints too: the client must be known to log it.
        let open = service.respond(to: HTTPRequest(method: "GET", path: "/open", headers: [(name: "forwarded", value: "for=[::1]")],
                                                   remoteAddress: "10.0.0.1"))
        #expect(open.status == 400)
        #expect(String(decoding: open.body, as: UTF8.self).contains("\"invalidForwarding\""))
        // Both headers naming different clients.
        let both = get(service, from: "10.0.0.1", key: Self.key, [("forwarded", "for=198.51.100.1"), ("x-forwarded-for", "203.0.113.1")])
        #expect(both.status == 400)
        #expect(String(decoding: both.body, as: UTF8.self).contains("\"conflictingForwarding\""))
        let line = try #require(captured.lines().first)
        #expect(line.contains("\"client\":\"10.0.0.1\""), "a refused header names nobody: \(line)")
        #expect(service.metrics.render().contains("pushgate_http_problem_errors_total{code=\"invalidForwarding\"} 2"))
    }
}
