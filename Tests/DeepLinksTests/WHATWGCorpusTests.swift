import Foundation
import Testing
import DeepLinks
import StrictJSON

/// The WHATWG URL conformance corpus (web-platform-tests `urltestdata.json`), read from
/// `../shared/corpus/` beside the package. pushgate is stricter than WHATWG on purpose,
/// so the corpus is used for three properties, not as a list of links to accept.
@Suite struct WHATWGCorpusTests {
    struct Case {
        let input: String
        let failure: Bool
        let href: String
        let proto: String
        let hostname: String
        let pathname: String
        let search: String
    }

    static let corpusPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus/urltestdata.json").path

    /// The cases, or an issue recorded (the corpus is required: a missing file fails).
    static func loadCases() -> [Case] {
        guard let data = FileManager.default.contents(atPath: corpusPath) else {
            Issue.record("WHATWG corpus not found at \(corpusPath)")
            return []
        }
        do {
            guard case .array(let entries) = try JSONParser().parse(Array(data)) else {
                Issue.record("corpus is not a JSON array")
                return []
            }
            return entries.compactMap { entry -> Case? in
                guard let o = entry.objectValue, let input = o["input"]?.stringValue else { return nil }
                func s(_ k: String) -> String { o[k]?.stringValue ?? "" }
                return Case(input: input, failure: o["failure"]?.boolValue == true, href: s("href"), proto: s("protocol"),
                            hostname: s("hostname"), pathname: s("pathname"), search: s("search"))
            }
        } catch {
            Issue.record("corpus does not parse: \(error)")
            return []
        }
    }

    static let cases = loadCases()
    static let appScheme = "sc"  // a non-special scheme the corpus uses a lot

    /// Special schemes WHATWG parses exactly like https (apart from default ports, and
    /// pushgate refuses every port): their inputs are also tried with `https:` swapped in.
    static func spellings(_ input: String) -> [String] {
        var out = [input]
        let lower = input.lowercased()
        for scheme in ["http:", "ws:", "wss:", "ftp:"] where lower.hasPrefix(scheme) {
            out.append("https:" + input.dropFirst(scheme.count))
        }
        return out
    }

    /// A table accepting the given host (if pushgate could list it), any path, the root,
    /// and the given query keys.
    static func permissiveTable(hosts: [String], queryKeys: [String]) throws -> RouteTable {
        let json = """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.corpus", "scheme": "\(appScheme)"},
         "hosts": [\(hosts.map { JSONWriter.quoted($0) }.joined(separator: ","))],
         "passthroughQuery": [\(queryKeys.map { JSONWriter.quoted($0) }.joined(separator: ","))],
         "routes": [{"name": "root", "path": "/"}, {"name": "any", "path": "/*"}]}
        """
        return try RouteTable(json: json, source: "corpus-table.json")
    }

    static func listableHost(_ host: String) -> Bool {
        (try? permissiveTable(hosts: [host], queryKeys: [])) != nil
    }

    static func queryKeys(_ search: String) -> [String] {
        var keys: [String] = []
        for item in search.dropFirst().split(separator: "&") {
            let key = String(item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
            if !keys.contains(key), (try? permissiveTable(hosts: ["a.b"], queryKeys: [key])) != nil { keys.append(key) }
        }
        return keys
    }

    /// Authority-looking text of an input, to list it as a host when it is a DNS name.
    static func guessedHost(_ input: String) -> String? {
        guard let start = input.firstRange(of: "://")?.upperBound else { return nil }
        let rest = input[start...]
        let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        let host = rest[..<end].lowercased()
        return listableHost(host) ? host : nil
    }

    /// 1. Every input WHATWG rejects is rejected, as written and with https swapped in,
    /// under a table listing every host the corpus names.
    @Test func everyWHATWGFailureIsRejected() throws {
        let cases = Self.cases
        try #require(cases.count > 800)
        var hosts: [String] = []
        for c in cases {
            for h in [c.failure ? nil : c.hostname, Self.guessedHost(c.input)].compactMap({ $0 })
                where !h.isEmpty && !hosts.contains(h) && Self.listableHost(h) {
                hosts.append(h)
            }
        }
        let keys = Array(Set(cases.flatMap { Self.queryKeys($0.search) })).sorted()
        let table = try Self.permissiveTable(hosts: hosts, queryKeys: keys)
        var checked = 0
        for c in cases where c.failure {
            for input in Self.spellings(c.input) {
                checked += 1
                if case .accepted(let l) = table.check(input) {
                    Issue.record("WHATWG rejects \(input.debugDescription) but pushgate accepted it as \(l.canonical)")
                }
            }
        }
        #expect(checked >= 267)
    }

    /// Inputs WHATWG accepts only by repairing them: pushgate never repairs.
    static func needsRepair(_ c: Case) -> String? {
        let input = c.input
        if input.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\r" }) { return "tab or newline stripped" }
        if let first = input.unicodeScalars.first, first.value <= 0x20 { return "leading C0/space trimmed" }
        if let last = input.unicodeScalars.last, last.value <= 0x20 { return "trailing C0/space trimmed" }
        if input.contains("\\") { return "backslash turned into slash" }
        let lower = input.lowercased()
        let special = ["http:", "https:", "ws:", "wss:", "ftp:"].contains(where: { lower.hasPrefix($0) })
        if special, let colon = lower.firstIndex(of: ":"), !lower[lower.index(after: colon)...].hasPrefix("//") {
            return "missing // inserted"
        }
        if let start = input.firstRange(of: "://")?.upperBound {
            let rest = input[start...]
            let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            // Special schemes decode and IDNA-map the host; other schemes keep it opaque.
            if special, authority.contains("%") { return "percent-encoded host decoded" }
            if special, authority.unicodeScalars.contains(where: { $0.value > 0x7F }) { return "IDNA mapping" }
            let pathEnd = rest.firstIndex(where: { "?#".contains($0) }) ?? rest.endIndex
            let segments = rest[authorityEnd..<pathEnd].split(separator: "/", omittingEmptySubsequences: false)
            let dots: Set<String> = [".", "..", "%2e", ".%2e", "%2e.", "%2e%2e"]
            if segments.contains(where: { dots.contains($0.lowercased()) }) { return "dot segments resolved" }
        }
        return nil
    }

    /// 2. Inputs WHATWG accepts only after repairing them are rejected, even under a
    /// table listing their host.
    @Test func repairedInputsAreRejected() throws {
        var checked = 0
        for c in Self.cases where !c.failure {
            guard let repair = Self.needsRepair(c) else { continue }
            let hosts = [c.hostname, Self.guessedHost(c.input)].compactMap { $0 }.filter { !$0.isEmpty && Self.listableHost($0) }
            let table = try Self.permissiveTable(hosts: hosts.isEmpty ? ["example.invalid"] : Array(Set(hosts)),
                                                 queryKeys: Self.queryKeys(c.search))
            for input in Self.spellings(c.input) {
                checked += 1
                if case .accepted(let l) = table.check(input) {
                    Issue.record("WHATWG repairs \(input.debugDescription) (\(repair)); pushgate accepted it as \(l.canonical)")
                }
            }
        }
        #expect(checked >= 100)
    }

    /// pushgate's view of an accepted link: host and decoded path segments.
    static func decodedSegments(ofPathname pathname: String) -> [String] {
        guard pathname.hasPrefix("/"), pathname != "/" else { return [] }
        return pathname.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { segment in
            var bytes: [UInt8] = []
            var i = segment.utf8.startIndex
            let utf8 = segment.utf8
            while i < utf8.endIndex {
                if utf8[i] == UInt8(ascii: "%"), let a = utf8.index(i, offsetBy: 1, limitedBy: utf8.endIndex), a < utf8.endIndex,
                   let b = utf8.index(i, offsetBy: 2, limitedBy: utf8.endIndex), b < utf8.endIndex,
                   let v = UInt8(String(decoding: [utf8[a], utf8[b]], as: UTF8.self), radix: 16) {
                    bytes.append(v)
                    i = utf8.index(after: b)
                } else {
                    bytes.append(utf8[i])
                    i = utf8.index(after: i)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// 3. Whatever pushgate accepts, WHATWG accepts too, with the same host and the same
    /// (decoded) path. For the app's scheme, pushgate's path is `/` + WHATWG's host + path.
    @Test func acceptedInputsAgreeWithWHATWG() throws {
        var compared = 0
        var differences: [String: Int] = [:]
        for c in Self.cases {
            let host = c.failure || !Self.listableHost(c.hostname) ? "example.invalid" : c.hostname
            let table = try Self.permissiveTable(hosts: [host], queryKeys: Self.queryKeys(c.search))
            for input in Self.spellings(c.input) {
                let result = table.check(input)
                guard case .accepted(let link) = result else {
                    if !c.failure, Self.needsRepair(c) == nil, let code = result.code { differences[code.rawValue, default: 0] += 1 }
                    continue
                }
                compared += 1
                if c.failure {
                    Issue.record("pushgate accepted \(input.debugDescription), which WHATWG rejects")
                    continue
                }
                let ours = link.params.first(where: { $0.name == "*" }).map {
                    $0.value.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                } ?? []
                if c.proto == Self.appScheme + ":" {
                    // The app scheme's "host" is pushgate's first path segment.
                    #expect(ours == Self.decodedSegments(ofPathname: "/" + c.hostname + c.pathname),
                            "\(input.debugDescription): ours \(ours), WHATWG host \(c.hostname) path \(c.pathname)")
                } else {
                    #expect(["http:", "https:", "ws:", "wss:", "ftp:"].contains(c.proto), "\(input.debugDescription) is \(c.proto)")
                    #expect(link.canonical.hasPrefix("https://" + c.hostname + "/"), "\(input.debugDescription) → \(link.canonical), WHATWG host \(c.hostname)")
                    #expect(ours == Self.decodedSegments(ofPathname: c.pathname),
                            "\(input.debugDescription): ours \(ours), WHATWG \(c.pathname)")
                }
            }
        }
        #expect(compared >= 25, "only \(compared) corpus inputs were accepted and compared")
        print("WHATWG corpus: \(compared) accepted inputs agree on host and path; WHATWG-valid inputs pushgate refuses without repair, by code: \(differences.sorted { $0.key < $1.key })")
    }
}
