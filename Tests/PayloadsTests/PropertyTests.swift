import DeepLinks
import Payloads
import StrictJSON
import Testing

@Suite struct PropertyTests {
    /// Characters chosen to break naive writers: JSON syntax, template syntax, controls,
    /// line separators, bidi controls, combining marks, emoji sequences, CJK.
    static let alphabet: [String] = ["a", "Z", " ", "\"", "\\", "/", "{", "}", "{{", "}}", "\n", "\t", "\u{0}", "\u{7F}",
                                     "\u{85}", "\u{2028}", "\u{2029}", "\u{202E}", "\u{200B}", "\u{FEFF}", "e\u{301}", "ł",
                                     "😀", "👨‍👩‍👧", "🇵🇱", "漢", "…", "%", "&", "?", "#"]

    static func randomText(_ rng: inout SplitMix64, maxLength: Int) -> String {
        let n = Int.random(in: 0...maxLength, using: &rng)
        return (0..<n).map { _ in alphabet.randomElement(using: &rng) ?? "a" }.joined()
    }

    @Test func anyVariableValueReadsBackExactly() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<200 {
            let name = Self.randomText(&rng, maxLength: 40)
            let price = Self.randomText(&rng, maxLength: 10)
            var device = Device(token: Fixtures.tokenA, variables: [
                NamedValue(name: "product_name", value: name), NamedValue(name: "new_price", value: price),
            ])
            device.variables.append(NamedValue(name: "product_id", value: "5"))
            let plan = try Fixtures.planner(requireDevices: false)
                .plan(jsonBytes: Array(#"{"template": "price_drop"}"#.utf8)).get()
            let body = try plan.body(for: device).bytes
            let json = try JSONParser().parse(body)
            #expect(json[path: "aps", "alert", "body"] == .string("\(name) is now \(price)."))
            // No raw control, separator or bidi character reaches the wire.
            #expect(!String(decoding: body, as: UTF8.self).unicodeScalars.contains(where: TextSafety.isUnsafe))
        }
    }

    @Test func truncationAlwaysFitsAndKeepsAPrefix() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<100 {
            let text = Self.randomText(&rng, maxLength: 1500) + String(repeating: "x", count: Int.random(in: 0...3000, using: &rng))
            let json = JSONWriter.serialize(.object(JSONObject([
                JSONMember(key: "alert", value: .object(JSONObject([JSONMember(key: "body", value: .string(text))]))),
                JSONMember(key: "truncate", value: .bool(true)),
                JSONMember(key: "devices", value: .array([.string(Fixtures.tokenA)])),
            ])))
            switch Fixtures.plan(json) {
            case .failure(let r):
                Issue.record("refused: \(r.problems)")
            case .success(let plan):
                let b = try plan.body(for: plan.devices[0])
                #expect(b.bytes.count <= 4096)
                let body = try #require(try JSONParser().parse(b.bytes)[path: "aps", "alert", "body"]?.stringValue)
                if b.truncated {
                    #expect(body.hasSuffix("…"))
                    let kept = body.dropLast()
                    #expect(text.hasPrefix(kept), "not a grapheme prefix")
                    // Largest that fits: one more character would not fit, unless the cut
                    // is at a word boundary (the character after it is whitespace).
                    let next = text.dropFirst(kept.count).first
                    let longer = String(text.prefix(kept.count + 1)) + "…"
                    let grown = b.bytes.count - escapedSize(body) + escapedSize(longer)
                    #expect(grown > 4096 || next.map { $0.isWhitespace } == true, "gave up too much: \(b.bytes.count)")
                } else {
                    #expect(body == text)
                }
            }
        }
    }

    private func escapedSize(_ s: String) -> Int {
        var out: [UInt8] = []
        JSONWriter.appendEscaped(s, to: &out)
        return out.count
    }

    @Test func mangledCampaignsNeverCrash() throws {
        let originals = try ["order-ready", "price-drop", "abandoned-cart", "inline-alert"].map {
            try Fixtures.bytes("config/campaigns/\($0).json")
        }
        var rng = SplitMix64(seed: 2026)
        let junk: [UInt8] = Array(#"{}[]",:0-9e.\"truefalsnul "#.utf8) + [0x00, 0xC3, 0xFF, 0xE2, 0x80, 0xA8]
        var accepted = 0
        for i in 0..<300 {
            var bytes = originals[i % originals.count]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[at] = junk.randomElement(using: &rng) ?? 0
            }
            switch Fixtures.planner().plan(jsonBytes: bytes) {
            case .success(let plan):
                accepted += 1
                for d in plan.devices {
                    let body = try plan.body(for: d).bytes
                    #expect(body.count <= plan.payloadLimit)
                    _ = try JSONParser().parse(body)
                }
            case .failure(let r):
                #expect(!r.problems.isEmpty)
            }
        }
        #expect(accepted < 300)
    }
}
