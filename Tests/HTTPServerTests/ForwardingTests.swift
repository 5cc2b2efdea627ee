import Testing
@testable import HTTPServer

private func range(_ text: String) throws -> IPAddressRange {
    switch IPAddressRange.parse(text) {
    case .success(let range): return range
    case .failure(let error): throw error
    }
}

private func address(_ text: String) throws -> IPAddress { try #require(IPAddress(text)) }

@Suite struct IPAddressRangeTests {
    @Test func ipv4RangesMatchTheirAddressesAndTheMappedForm() throws {
        let tens = try range("10.0.0.0/8")
        #expect(try tens.contains(try address("10.255.1.2")))
        #expect(try tens.contains(try address("::ffff:10.1.2.3")), "a dual-stack socket's form of an IPv4 peer")
        #expect(try !tens.contains(try address("11.0.0.1")))
        #expect(try !tens.contains(try address("::a00:1")), "::10.0.0.1 (IPv4-compatible) is not 10.0.0.1")
        let one = try range("192.0.2.7")
        #expect(try one.contains(try address("192.0.2.7")) && !one.contains(try address("192.0.2.8")))
        #expect(try range("0.0.0.0/0").contains(try address("203.0.113.1")))
        #expect(try !(try range("0.0.0.0/0")).contains(try address("2001:db8::1")), "an IPv4 range holds no IPv6 address")
        #expect(try range("192.0.2.128/25").contains(try address("192.0.2.200")))
        #expect(try !(try range("192.0.2.128/25")).contains(try address("192.0.2.127")))
    }

    @Test func ipv6Ranges() throws {
        let doc = try range("2001:db8::/32")
        #expect(try doc.contains(try address("2001:db8:ffff::1")))
        #expect(try doc.contains(try address("2001:0DB8::abcd")))
        #expect(try !doc.contains(try address("2001:db9::1")))
        #expect(try !doc.contains(try address("192.0.2.1")))
        let odd = try range("fd00:1234:5600::/39")
        #expect(try odd.contains(try address("fd00:1234:57ff::1")))
        #expect(try !odd.contains(try address("fd00:1234:5800::1")))
        #expect(try range("::1").contains(try address("::1")))
        #expect(try !(try range("::1")).contains(try address("127.0.0.1")))
        #expect(try range("::/0").contains(try address("2001:db8::1")))
        #expect(try range("2001:db8::/32").description == "2001:db8::/32")
        #expect(try range("::ffff:10.0.0.0/104").contains(try address("10.9.9.9")), "the mapped form of 10.0.0.0/8")
    }

    @Test func badRangesSayWhy() {
        func message(_ text: String) -> String? {
            if case .failure(let error) = IPAddressRange.parse(text) { return error.message }
            return nil
        }
        #expect(message("10.0.0.0/33")?.contains("0 to 32") == true)
        #expect(message("2001:db8::/129")?.contains("0 to 128") == true)
        #expect(message("10.1.0.0/8") == "10.1.0.0/8 has bits set past the prefix; the range starts at 10.0.0.0/8")
        #expect(message("proxy.example.com")?.contains("is not an IPv4 or IPv6 address") == true)
        #expect(message("10.0.0.0/") != nil)
        #expect(message("10.0.0.0/+8") != nil)
        #expect(message("10.0.0.0/08 ") != nil)
        #expect(message("") != nil)
        #expect(message("fe80::1%eth0") != nil, "no zones")
        #expect(message("010.0.0.1") != nil, "inet_pton refuses leading zeros")
    }
}

@Suite struct ForwardingHeaderTests {
    func forwarded(_ lines: String...) -> Result<[String], ForwardingProblem> {
        ForwardingHeaders.forwarded(lines).map { $0.map(\.description) }
    }

    func forwardedFor(_ lines: String...) -> Result<[String], ForwardingProblem> {
        ForwardingHeaders.xForwardedFor(lines).map { $0.map(\.description) }
    }

    func code(_ result: Result<[String], ForwardingProblem>) -> ForwardingProblem.Code? {
        if case .failure(let problem) = result { return problem.code }
        return nil
    }

    @Test func forwardedAsRFC7239WritesIt() {
        #expect(forwarded(#"for="_gazonk""#) == .success(["_gazonk"]))
        #expect(forwarded(#"For="[2001:db8:cafe::17]:4711""#) == .success(["2001:db8:cafe::17"]))
        #expect(forwarded("for=192.0.2.60;proto=http;by=203.0.113.43") == .success(["192.0.2.60"]))
        #expect(forwarded("for=192.0.2.43, for=198.51.100.17") == .success(["192.0.2.43", "198.51.100.17"]))
        #expect(forwarded("for=192.0.2.43", "for=unknown ; proto=https") == .success(["192.0.2.43", "unknown"]),
                "two lines are one list")
        #expect(forwarded(#"for="192.0.2.43:47011""#) == .success(["192.0.2.43"]))
        #expect(forwarded(#"for="[::1]""#) == .success(["::1"]))
        #expect(forwarded(#"for="unknown:_port""#) == .success(["unknown"]))
        #expect(forwarded("proto=https;host=example.com") == .success(["unknown"]), "an element without for= is a hop that did not say")
        #expect(forwarded("for=192.0.2.1,,for=192.0.2.2") == .success(["192.0.2.1", "192.0.2.2"]), "empty list elements are allowed")
        #expect(forwarded(#"for="\1\9\2.0.2.5""#) == .success(["192.0.2.5"]), "quoted-pairs")
    }

    @Test func malformedForwardedIsRefusedWithWhere() {
        #expect(code(forwarded("for=2001:db8::1")) == .invalidForwarding, "IPv6 must be quoted and bracketed")
        #expect(code(forwarded(#"for="2001:db8::1""#)) == .invalidForwarding, "IPv6 must be in brackets")
        #expect(code(forwarded("for=192.0.2.43:80")) == .invalidForwarding, "a port needs quotes")
        #expect(code(forwarded(#"for="[2001:db8::1"#)) == .invalidForwarding)
        #expect(code(forwarded(#"for="[2001:db8::1]:port""#)) == .invalidForwarding)
        #expect(code(forwarded(#"for="[192.0.2.1]""#)) == .invalidForwarding)
        #expect(code(forwarded("for=300.1.1.1")) == .invalidForwarding)
        #expect(code(forwarded("for=example.com")) == .invalidForwarding)
        #expect(code(forwarded("for=_")) == .invalidForwarding)
        #expect(code(forwarded("for=192.0.2.1;for=192.0.2.2")) == .invalidForwarding, "a parameter twice in one element")
        #expect(code(forwarded("for")) == .invalidForwarding)
        #expect(code(forwarded("for=")) == .invalidForwarding)
        #expect(code(forwarded("=192.0.2.1")) == .invalidForwarding)
        #expect(code(forwarded("for = 192.0.2.1")) == .invalidForwarding)
        #expect(code(forwarded("for=192.0.2.1 x")) == .invalidForwarding)
        #expect(code(forwarded(" , ")) == .invalidForwarding, "no element at all")
        #expect(code(forwarded("for=\"192.0.2.1\u{1}\"")) == .invalidForwarding)
        if case .failure(let problem) = forwarded("for=192.0.2.1, for=2001:db8::1") {
            #expect(problem.header == "Forwarded")
            #expect(problem.detail == #"element 2: a value with ":" or brackets must be quoted (for="[2001:db8::1]:4711", for="192.0.2.43:4711") at byte 24"#,
                    "\(problem.detail)")
        } else {
            Issue.record("accepted an unquoted IPv6 address")
        }
    }

    @Test func oversizedForwardingIsItsOwnCode() {
        let many = (0..<33).map { "for=192.0.2.\($0)" }.joined(separator: ",")
        #expect(code(forwarded(many)) == .forwardingTooLarge)
        #expect(code(forwarded((0..<32).map { "for=192.0.2.\($0)" }.joined(separator: ","))) == nil, "32 hops are fine")
        #expect(code(forwarded("for=192.0.2.1;host=" + String(repeating: "a", count: 2100))) == .forwardingTooLarge)
        #expect(code(forwardedFor((0..<33).map { "192.0.2.\($0)" }.joined(separator: ", "))) == .forwardingTooLarge)
        #expect(code(forwardedFor(String(repeating: "1", count: 2049))) == .forwardingTooLarge)
    }

    @Test func xForwardedFor() {
        #expect(forwardedFor("203.0.113.195, 2001:db8:85a3:8d3:1319:8a2e:370:7348, 198.51.100.178")
                == .success(["203.0.113.195", "2001:db8:85a3:8d3:1319:8a2e:370:7348", "198.51.100.178"]))
        #expect(forwardedFor("192.0.2.1:5678", "[2001:db8::2]:80, [::1]") == .success(["192.0.2.1", "2001:db8::2", "::1"]))
        #expect(forwardedFor("unknown,192.0.2.1") == .success(["unknown", "192.0.2.1"]))
        #expect(forwardedFor("::ffff:192.0.2.9") == .success(["192.0.2.9"]))
        #expect(code(forwardedFor("192.0.2.1,,192.0.2.2")) == .invalidForwarding)
        #expect(code(forwardedFor("")) == .invalidForwarding)
        #expect(code(forwardedFor("not-an-ip")) == .invalidForwarding)
        #expect(code(forwardedFor("_hidden")) == .invalidForwarding)
        #expect(code(forwardedFor("192.0.2.1;proto=http")) == .invalidForwarding)
        #expect(code(forwardedFor("192.0.2.1 192.0.2.2")) == .invalidForwarding)
        if case .failure(let problem) = forwardedFor("192.0.2.1, <script>\u{202E}") {
            #expect(problem.detail.hasPrefix("element 2: "))
            #expect(!problem.detail.contains("\u{202E}"), "the client's text is escaped: \(problem.detail)")
        } else {
            Issue.record("accepted garbage")
        }
    }
}

@Suite struct TrustedProxiesTests {
    let proxies = TrustedProxies([try! range("10.0.0.0/8"), try! range("2001:db8:ffff::/48"), try! range("127.0.0.1")])

    func client(_ peer: String, _ headers: [(String, String)]) -> Result<ClientAddress, ForwardingProblem> {
        proxies.client(peer: peer, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    @Test func anUntrustedPeersHeadersAreNotRead() {
        #expect(client("192.0.2.9", [("x-forwarded-for", "203.0.113.1")]) == .success(ClientAddress(peer: "192.0.2.9")))
        #expect(client("192.0.2.9", [("x-forwarded-for", "garbage")]) == .success(ClientAddress(peer: "192.0.2.9")),
                "not even parsed: nothing to refuse")
        #expect(client("2001:db8::1", [("forwarded", "for=203.0.113.1")]) == .success(ClientAddress(peer: "2001:db8::1")))
        #expect(TrustedProxies.none.client(peer: "10.0.0.1", headers: [(name: "x-forwarded-for", value: "203.0.113.1")])
                == .success(ClientAddress(peer: "10.0.0.1")))
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        #expect(client("10.0.0.2", [("x-forwarded-for", "198.51.100.1, 203.0.113.7, 10.1.1.1")])
                == .success(ClientAddress(client: "203.0.113.7", peer: "10.0.0.2", limitKey: "203.0.113.7")),
                "a forged leftmost entry is not believed")
        #expect(client("2001:db8:ffff:1::5", [("forwarded", #"for="[2001:db8:1::9]:4711", for="[2001:db8:ffff:2::1]""#)])
                == .success(ClientAddress(client: "2001:db8:1::9", peer: "2001:db8:ffff:1::5", limitKey: "2001:db8:1::9")))
        #expect(client("::ffff:10.0.0.2", [("x-forwarded-for", "203.0.113.7")])
                == .success(ClientAddress(client: "203.0.113.7", peer: "::ffff:10.0.0.2", limitKey: "203.0.113.7")))
        #expect(client("10.0.0.2", [("x-forwarded-for", "10.0.0.9, 10.0.0.3")])
                == .success(ClientAddress(client: "10.0.0.9", peer: "10.0.0.2", limitKey: "10.0.0.9")),
                "every hop a proxy: the leftmost")
        #expect(client("10.0.0.2", []) == .success(ClientAddress(peer: "10.0.0.2")), "a proxy's own request")
    }

    @Test func unknownAndObfuscatedClientsShareTheProxysBucket() {
        #expect(client("10.0.0.2", [("forwarded", "for=unknown")])
                == .success(ClientAddress(client: "unknown", peer: "10.0.0.2", limitKey: "10.0.0.2")))
        #expect(client("10.0.0.2", [("forwarded", "for=192.0.2.1, for=_mobile7")])
                == .success(ClientAddress(client: "_mobile7", peer: "10.0.0.2", limitKey: "10.0.0.2")))
    }

    @Test func bothHeadersMustAgree() {
        let agreeing = client("10.0.0.2", [("forwarded", #"for=203.0.113.7;proto=https, for="10.1.1.1:80""#),
                                           ("x-forwarded-for", "203.0.113.7, 10.1.1.1")])
        #expect(agreeing == .success(ClientAddress(client: "203.0.113.7", peer: "10.0.0.2", limitKey: "203.0.113.7")))
        // A proxy that writes X-Forwarded-For passes the client's own Forwarded through.
        guard case .failure(let problem) = client("10.0.0.2", [("forwarded", "for=198.51.100.1"),
                                                               ("x-forwarded-for", "203.0.113.7")]) else {
            Issue.record("two headers naming different clients were accepted")
            return
        }
        #expect(problem.code == .conflictingForwarding)
        #expect(problem.detail.contains("[198.51.100.1]") && problem.detail.contains("[203.0.113.7]"), "\(problem.detail)")
    }

    @Test func aMalformedHeaderFromATrustedPeerIsAProblem() {
        guard case .failure(let problem) = client("127.0.0.1", [("x-forwarded-for", "203.0.113.7, nonsense")]) else {
            Issue.record("accepted")
            return
        }
        #expect(problem.code == .invalidForwarding && problem.header == "X-Forwarded-For")
    }
}
