import DeepLinks
import Payloads
import StrictJSON
import Testing

@Suite struct TruncationTests {
    /// `{"aps":{"alert":{"body":"…"}}}` around the body text.
    static let overhead = #"{"aps":{"alert":{"body":""}}}"#.utf8.count

    private func campaign(body: String, truncate: Bool, pushType: String = "alert", extra: String = "") -> String {
        #"{"alert": {"body": "\#(body)"}, "push_type": "\#(pushType)", "truncate": \#(truncate)\#(extra), "devices": ["\#(Fixtures.tokenA)"]}"#
    }

    private func body(_ json: String) throws -> PayloadBody {
        let plan = try Fixtures.plan(json).get()
        return try plan.body(for: plan.devices[0])
    }

    private func alertBody(_ b: PayloadBody) throws -> String {
        try #require(try JSONParser().parse(b.bytes)[path: "aps", "alert", "body"]?.stringValue)
    }

    @Test func exactly4096BytesFitsUntouched() throws {
        let text = String(repeating: "a", count: 4096 - Self.overhead)
        for truncate in [false, true] {
            let b = try body(campaign(body: text, truncate: truncate))
            #expect(b.bytes.count == 4096)
            #expect(!b.truncated)
        }
    }

    @Test func oneByteOverIsRefusedWithSizeAndLimit() {
        let text = String(repeating: "a", count: 4097 - Self.overhead)
        let problems = Fixtures.problems(campaign(body: text, truncate: false))
        #expect(problems.map(\.code) == [.payloadTooLarge])
        #expect(problems.first?.path.description == "devices[0]")
        #expect(problems.first?.message.contains("4097 bytes") == true)
        #expect(problems.first?.message.contains("is 4096") == true)
    }

    @Test func oneByteOverIsShortenedToExactlyTheLimit() throws {
        let text = String(repeating: "a", count: 4097 - Self.overhead)
        let b = try body(campaign(body: text, truncate: true))
        #expect(b.truncated)
        #expect(b.bytes.count == 4096)
        let shortened = try alertBody(b)
        #expect(shortened == String(repeating: "a", count: 4096 - Self.overhead - 3) + "…")
    }

    @Test func multiByteCharactersAreNeverSplit() throws {
        // 2-byte "ł" and a 25-byte family emoji (one grapheme of several scalars).
        for unit in ["ł", "👨‍👩‍👧‍👦", "e\u{301}"] {
            let text = String(repeating: unit, count: 4200 / unit.utf8.count)
            let b = try body(campaign(body: text, truncate: true))
            #expect(b.bytes.count <= 4096)
            #expect(b.bytes.count > 4096 - unit.utf8.count - 3, "not the largest that fits")
            let shortened = try alertBody(b)
            #expect(shortened.hasSuffix("…"))
            #expect(shortened.dropLast().allSatisfy { String($0) == unit }, "split inside \(unit)")
        }
    }

    @Test func cutsAtAWordBoundaryWhenOneIsNear() throws {
        let text = String(repeating: "lorem ipsum ", count: 400)
        let b = try body(campaign(body: text, truncate: true))
        let shortened = try alertBody(b)
        #expect(b.bytes.count <= 4096)
        #expect(shortened.hasSuffix("lorem…") || shortened.hasSuffix("ipsum…"), "\(shortened.suffix(20))")
        #expect(b.bytes.count > 4096 - 6 - 3)
    }

    @Test func escapedCharactersCountAsTheirEscapedSize() throws {
        // Each quote takes two bytes once escaped, each U+2028 six.
        let text = String(repeating: #"\"\u2028"#, count: 600)
        let b = try body(campaign(body: text, truncate: true))
        #expect(b.truncated)
        #expect(b.bytes.count <= 4096 && b.bytes.count > 4096 - 6 - 3)
        #expect(try alertBody(b).hasSuffix("…"))
    }

    @Test func voipAllows5120() throws {
        let text = String(repeating: "v", count: 5120 - Self.overhead)
        let b = try body(campaign(body: text, truncate: false, pushType: "voip"))
        #expect(b.bytes.count == 5120)
        #expect(Fixtures.codes(campaign(body: text + "v", truncate: false, pushType: "voip")) == ["devices[0]: payloadTooLarge"])
    }

    @Test func whenEvenAnEllipsisDoesNotFitItIsRefused() {
        let big = String(repeating: "d", count: 4100)
        let problems = Fixtures.problems(campaign(body: "hello", truncate: true, extra: #", "data": {"blob": "\#(big)"}"#))
        #expect(problems.map(\.code) == [.payloadTooLarge])
        #expect(problems.first?.message.contains("even an empty body does not fit") == true)
    }

    @Test func templateBodiesAreShortenedPerDevice() throws {
        let long = String(repeating: "Very long product name ", count: 200)
        let json = #"""
        {"template": "price_drop", "truncate": true, "variables": {"product_id": "7", "new_price": "$3", "product_name": "Mug"},
         "devices": ["\#(Fixtures.tokenA)", {"token": "\#(Fixtures.tokenB)", "variables": {"product_name": "\#(long)"}}]}
        """#
        let plan = try Fixtures.plan(json).get()
        let short = try plan.body(for: plan.devices[0])
        let shortened = try plan.body(for: plan.devices[1])
        #expect(!short.truncated)
        #expect(shortened.truncated)
        #expect(shortened.bytes.count <= 4096)
        let parsed = try JSONParser().parse(shortened.bytes)
        #expect(parsed[path: "deeplink"] == .string("https://example.com/product/7?ref=price-drop"))
        #expect(parsed[path: "aps", "alert", "body"]?.stringValue?.hasSuffix("…") == true)
    }
}
