import Testing
import DeepLinks
import StrictJSON

/// The streaming writer (straight from the scanner's memory) against the plain path
/// (check, then write the result), over generated links of both tables and raw bytes.
@Suite struct LinkResultJSONTests {
    @Test(arguments: [UInt64(11), 12])
    func streamingWriterMatchesCheckThenWrite(seed: UInt64) {
        for (name, t) in RoundTripPropertyTests.tables {
            var generator = SampleLinkGenerator(table: t, seed: seed)
            for _ in 0..<2000 {
                let link = generator.next(hostileFraction: 0.4)
                expectSame(Array(link.utf8), table: t, name: name)
            }
        }
    }

    @Test func rawBytesThatAreNotText() {
        let cases: [[UInt8]] = [
            [], Array("https://example.com/help/\u{7}".utf8) + [0xFF],
            Array("https://example.com/help/".utf8) + [0xC5],
            Array("java\tscript:".utf8) + [0xE2, 0x28, 0xA1],
            Array(repeating: UInt8(ascii: "a"), count: 3000) + [0x80],
            Array("https://example.com/product/42".utf8),
        ]
        for bytes in cases { expectSame(bytes, table: shopTable, name: "shop") }
    }

    private func expectSame(_ bytes: [UInt8], table t: RouteTable, name: String) {
        var streamed = JSONWriter()
        let accepted = bytes.withUnsafeBufferPointer { LinkResultJSON.write(checking: $0, against: t, to: &streamed) }
        let result = bytes.withUnsafeBufferPointer { t.check(utf8: $0) }
        var plain = JSONWriter()
        LinkResultJSON.write(result, to: &plain)
        #expect(streamed.string == plain.string, "\(name): \(bytes)")
        if case .accepted = result { #expect(accepted) } else { #expect(!accepted) }
        if let text = String(validating: bytes, as: UTF8.self) { #expect(t.check(text) == result) }
    }
}
