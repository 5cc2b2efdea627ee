import Testing
import DeepLinks

/// Properties over thousands of seeded, generated links.
@Suite struct RoundTripPropertyTests {
    /// A table exercising every type in path and query, required keys and a root route.
    static let richTableJSON = """
    {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.rich", "scheme": "rich"},
     "hosts": ["rich.example", "m.rich.example"], "passthroughQuery": ["utm_source", "gclid"],
     "routes": [
       {"name": "home", "path": "/"},
       {"name": "article", "path": "/a/:slug/:n", "params": {"slug": "slug", "n": "int"}, "query": {"lang": ["en", "pl"]}},
       {"name": "user", "path": "/u/:id", "params": {"id": "uuid"}, "query": {"sel": {"type": "uuid", "required": true}}},
       {"name": "tag", "path": "/t/:name", "params": {"name": "string"}, "query": {"q": "string", "page": "int"}},
       {"name": "tagNew", "path": "/t/new"},
       {"name": "kind", "path": "/k/:kind/*", "params": {"kind": ["x", "y"]}},
       {"name": "files", "path": "/files/*"}
     ]}
    """

    static let tables: [(String, RouteTable)] = {
        var out = [("shop", shopTable)]
        if let rich = try? RouteTable(json: richTableJSON, source: "rich.json") { out.append(("rich", rich)) }
        return out
    }()

    @Test func richTableLoads() throws {
        _ = try RouteTable(json: Self.richTableJSON, source: "rich.json")
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func validLinksAreAcceptedAndCanonicalFormIsAFixedPoint(seed: UInt64) {
        for (name, t) in Self.tables {
            var generator = SampleLinkGenerator(table: t, seed: seed)
            var failures = 0
            for _ in 0..<3000 {
                let link = generator.validLink()
                guard case .accepted(let first) = t.check(link) else {
                    failures += 1
                    if failures <= 5 { Issue.record("\(name): generated valid link refused: \(link.debugDescription) → \(t.check(link))") }
                    continue
                }
                let again = t.check(first.canonical)
                if again != .accepted(first) {
                    failures += 1
                    if failures <= 5 { Issue.record("\(name): \(link.debugDescription) → \(first.canonical.debugDescription) → \(again)") }
                }
                // The canonical form is plain printable ASCII.
                if !first.canonical.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                    Issue.record("\(name): canonical form not printable ASCII: \(first.canonical.debugDescription)")
                }
            }
            #expect(failures == 0, "\(name): \(failures) failures")
        }
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func hostileLinksAreRefused(seed: UInt64) {
        for (name, t) in Self.tables {
            var generator = SampleLinkGenerator(table: t, seed: seed)
            var seen = Set<LinkErrorCode>()
            for _ in 0..<3000 {
                let link = generator.hostileLink()
                switch t.check(link) {
                case .accepted(let l):
                    Issue.record("\(name): hostile link accepted: \(link.debugDescription) → \(l.canonical)")
                case .rejected(let r):
                    seen.insert(r.code)
                }
            }
            #expect(seen.count >= 15, "\(name): codes seen \(seen.map(\.rawValue).sorted())")
        }
    }

    /// Whatever the bytes, a verdict and no trap: random mutations of valid links.
    @Test func arbitraryBytesNeverTrap() {
        var generator = SampleLinkGenerator(table: shopTable, seed: 99)
        var state: UInt64 = 0x1234_5678  // a fixed LCG: the same bytes on every run
        for _ in 0..<3000 {
            var bytes = Array(generator.next(hostileFraction: 0.5).utf8)
            for _ in 0..<3 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let at = Int(state >> 33) % (bytes.count + 1)
                let byte = UInt8(truncatingIfNeeded: state >> 17)
                bytes.insert(byte, at: at)
            }
            let link = String(decoding: bytes, as: UTF8.self)
            if case .accepted(let l) = shopTable.check(link) {
                #expect(shopTable.check(l.canonical) == .accepted(l))
            }
        }
    }
}
