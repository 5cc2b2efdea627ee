import Testing
@testable import StrictJSON
import DeepLinks

extension JSONWriter {
    /// `writeDecimal`'s digits of `value`, appended to `out`.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            let n = writeDecimal(value, into: digits.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[0..<n]))
        }
    }
}

@Suite struct JSONWriterAPITests {
    @Test func objectsArraysAndMembersGetTheirCommas() {
        var w = JSONWriter()
        w.object { w in
            w.member("ok", true)
            w.member("n", -42)
            w.member("s", "a\"b")
            w.member("none", orNull: nil as String?)
            w.member("empty", object: { _ in })
            w.member("list", array: { w in
                w.int(1)
                w.object { w in w.member("k", "v") }
                w.array { _ in }
                w.null()
                w.string("x")
            })
            let name = "dynamic\u{7}"
            w.key(name)
            w.value(.object(JSONObject([JSONMember(key: "a", value: .array([.number("1.5"), .bool(false)]))])))
            w.member("d", 0.25)
        }
        #expect(w.string == #"{"ok":true,"n":-42,"s":"a\"b","none":null,"empty":{},"list":[1,{"k":"v"},[],null,"x"],"dynamic\u0007":{"a":[1.5,false]},"d":0.25}"#)
    }

    @Test func topLevelSequenceAndReuse() {
        var w = JSONWriter()
        w.array([3, 1, 2]) { w, n in w.int(n) }
        #expect(w.string == "[3,1,2]")
        w.removeAll()
        w.string(pieces: { w in
            w.escaped("/help/")
            w.escaped("a\tb")
        })
        #expect(w.string == #""/help/a\tb""#)
        // Copies share the buffer until one writes.
        var copy = w
        copy.raw("!")
        #expect(w.string == #""/help/a\tb""#)
        #expect(copy.string == #""/help/a\tb"!"#)
        // Growing far past the first capacity keeps everything.
        var big = JSONWriter(capacity: 1)
        big.array { w in for n in 0..<10_000 { w.int(n) } }
        #expect(big.string == "[" + (0..<10_000).map(String.init).joined(separator: ",") + "]")
    }

    @Test func integersWithoutStrings() {
        for n in [0, 7, 10, -1, -10, 1234567890, Int.max, Int.min] {
            var out: [UInt8] = []
            JSONWriter.appendDecimal(n, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(n))
        }
    }

    @Test func doublesThatJSONCannotHoldAreNull() {
        var w = JSONWriter()
        w.array { w in w.double(.nan); w.double(.infinity); w.double(1e21) }
        #expect(w.string == "[null,null,1e+21]")
    }

    @Test func rawTextKeepsOldStyleWritersWorking() {
        var w = JSONWriter()
        w.raw("{\"a\":")
        w.string("x")
        w.raw(",\"b\":")
        w.int(1)
        w.byte(UInt8(ascii: "}"))
        #expect(w.string == #"{"a":"x","b":1}"#)
    }

    /// The fast path (8 bytes at a time, runs copied whole) against the plain
    /// scalar-by-scalar definition, over text with every kind of character at every
    /// position relative to the 8-byte blocks.
    @Test func fastEscaperMatchesTheDefinition() {
        let pieces: [String] = ["a", "plain ascii ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "~", " ",
                                "é", "\u{85}", "\u{AD}", "\u{2028}", "\u{202E}", "\u{200B}", "\u{FEFF}", "żółw", "😀",
                                "\u{E0041}", "\u{10FFFF}", "日本"]
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<rng.below(12) { text += pieces[rng.below(pieces.count)] }
            #expect(JSONWriter.quoted(text) == Self.reference(text), "\(Array(text.unicodeScalars))")
        }
        for byte in UInt8(0)...0x7F {
            let text = String(repeating: "x", count: Int(byte) % 9) + String(UnicodeScalar(byte)) + "yyyyyyyy"
            #expect(JSONWriter.quoted(text) == Self.reference(text), "byte \(byte)")
        }
    }

    static func reference(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if TextSafety.isUnsafe(scalar) {
                    TextSafety.appendUnicodeEscape(scalar, to: &out)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

@Suite struct TextSafetyTableTests {
    /// The range tables against the Unicode properties they stand for, over every scalar.
    @Test func tablesAgreeWithUnicodeProperties() {
        var mismatches: [String] = []
        for v in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue }
            if TextSafety.isUnsafe(scalar) != TextSafety.isUnsafeByProperties(scalar) {
                mismatches.append("unsafe U+\(String(v, radix: 16, uppercase: true))")
            }
            if TextSafety.isWhitespace(scalar) != scalar.properties.isWhitespace {
                mismatches.append("whitespace U+\(String(v, radix: 16, uppercase: true))")
            }
        }
        #expect(mismatches.isEmpty, "regenerate TextSafety's tables: \(mismatches.prefix(20))")
    }
}

@Suite struct EscapeSafeTextTests {
    /// `escapeSafeText` writes what `escape` writes for text without controls or unsafe
    /// characters: quotes and backslashes at every offset around its 8-byte steps, UTF-8
    /// of every length, a word cut by the end.
    @Test func sameBytesAsTheFullEscaper() {
        let pieces = ["a", "\"", "\\", "é", "日本", "😀", "%", "~", "ż", "Ω"]
        var texts: [String] = ["", "plain-ascii-0123456789", String(repeating: "x", count: 23)]
        for lead in 0..<10 {
            for piece in pieces { texts.append(String(repeating: "k", count: lead) + piece + String(repeating: "z", count: 9 - lead)) }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 { texts.append((0..<Int.random(in: 1...30, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()) }
        for text in texts {
            let bytes = Array(text.utf8)
            let (full, safe) = bytes.withUnsafeBufferPointer { input in
                (escaped(input) { JSONWriter.escape($0, into: $1) }, escaped(input) { JSONWriter.escapeSafeText($0, into: $1) })
            }
            #expect(full == safe, "\(text)")
        }
    }

    private func escaped(_ input: UnsafeBufferPointer<UInt8>,
                         _ escaper: (UnsafeBufferPointer<UInt8>, UnsafeMutablePointer<UInt8>) -> Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 6 * input.count + 1) { out, count in count = escaper(input, out.baseAddress!) }
    }
}
