import Foundation
import Testing
import DeepLinks
import Gateway

@Suite struct RouteFingerprintTests {
    static let table = """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
         "hosts": ["example.com", "www.example.com"], "passthroughQuery": ["utm_source"],
         "routes": [{"name": "p", "path": "/p/:id", "params": {"id": "int"}, "query": {"ref": "slug", "tab": ["a", "b"]}},
                    {"name": "h", "path": "/h/*"}]}
        """

    func fingerprint(_ json: String) throws -> String { try RouteTable(json: json, source: "t.json").fingerprint }

    /// SHA-256 of the canonical text, as an independent tool computes it.
    @Test func isTheSHA256OfTheCanonicalText() throws {
        let table = try RouteTable(json: Self.table, source: "t.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(table.fingerprintText.utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(printed.split(separator: " ").first.map(String.init) == table.fingerprint)
        #expect(table.fingerprint.utf8.count == 64)
    }

    /// The same table spelled differently: member order, whitespace, `{"type": …}`.
    @Test func ignoresSpelling() throws {
        let respelled = """
            {"routes": [{"path": "/p/:id", "name": "p", "query": {"ref": {"type": "slug"}, "tab": ["a", "b"]}, "params": {"id": "int"}},
                        {"path": "/h/*", "name": "h"}],
             "passthroughQuery": ["utm_source"], "hosts": ["example.com", "www.example.com"],
             "app": {"scheme": "shop", "bundleId": "com.example.shop", "teamId": "A1B2C3D4E5"}}
            """
        #expect(try fingerprint(respelled) == fingerprint(Self.table))
    }

    /// Anything that changes what links mean changes it.
    @Test(arguments: [
        ("\"www.example.com\"", "\"m.example.com\""),
        ("\"slug\"", "\"string\""),
        ("[\"a\", \"b\"]", "[\"b\", \"a\"]"),
        ("\"/h/*\"", "\"/help/*\""),
        ("\"shop\"", "\"store\""),
        ("[\"utm_source\"]", "[]"),
    ])
    func changesWithTheTable(_ change: (String, String)) throws {
        let changed = Self.table.replacingOccurrences(of: change.0, with: change.1)
        #expect(changed != Self.table)
        #expect(try fingerprint(changed) != fingerprint(Self.table))
    }
}
