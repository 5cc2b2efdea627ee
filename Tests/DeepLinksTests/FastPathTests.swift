import Testing
@testable import DeepLinks
import StrictJSON

/// The canonicaliser's shortcuts (word-at-a-time tests, skipped checks, the prescan's
/// inline two-byte scalars, frozen tables) give exactly the answers of the plain code
/// they stand for.
@Suite struct FastPathTests {
    /// A deterministic byte source for the comparisons below.
    struct Noise {
        var state: UInt64
        mutating func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// Every byte value in every position of an otherwise plain word.
    static func wordsWithEveryByte(filler: UInt8 = UInt8(ascii: "a")) -> [(UInt64, [UInt8])] {
        var out: [(UInt64, [UInt8])] = []
        for position in 0..<8 {
            for b in 0...255 {
                var bytes = [UInt8](repeating: filler, count: 8)
                bytes[position] = UInt8(b)
                out.append((word(bytes), bytes))
            }
        }
        return out
    }

    @Test func byteWordTestsMatchBytewiseTests() {
        for (w, bytes) in Self.wordsWithEveryByte() where w & ByteWord.high == 0 {
            for (lower, n) in [(UInt64(0x30), UInt64(10)), (0x41, 26), (0x61, 6), (0x22, 2), (0x7B, 3)] {
                let expected = bytes.enumerated().reduce(UInt64(0)) { mask, item in
                    UInt64(item.element) >= lower && UInt64(item.element) < lower + n ? mask | 0x80 << (8 * UInt64(item.offset)) : mask
                }
                #expect(ByteWord.inRange(w, lower, n) == expected, "\(bytes) in \(lower)..<\(lower + n)")
            }
            for probe in [UInt8(ascii: "/"), UInt8(ascii: "&"), UInt8(ascii: "%"), 0x00, 0x7F] {
                let expected = bytes.enumerated().reduce(UInt64(0)) { $1.element == probe ? $0 | 0x80 << (8 * UInt64($1.offset)) : $0 }
                #expect(ByteWord.equal(w, probe) == expected)
            }
        }
        for (w, bytes) in Self.wordsWithEveryByte() {
            for probe in [UInt8(ascii: "/"), UInt8(ascii: "&"), UInt8(ascii: "%"), 0x00, 0xFF] {
                #expect(ByteWord.contains(w, probe) == bytes.contains(probe), "\(bytes) contains \(probe)")
            }
            for lowercasing in [false, true] {
                let expected: UInt64? = bytes.allSatisfy(ASCII.isUnreserved)
                    ? Self.word(bytes.map { lowercasing ? ASCII.lowercased($0) : $0 }) : nil
                #expect(ByteWord.unreserved(w, lowercasing: lowercasing) == expected, "\(bytes)")
            }
        }
    }

    @Test func uuidCheckMatchesTheRule() {
        func reference(_ b: [UInt8]) -> Bool {
            b.count == 36 && b.indices.allSatisfy { i in
                [8, 13, 18, 23].contains(i) ? b[i] == UInt8(ascii: "-") : ASCII.isHexDigit(b[i])
            }
        }
        let valid = Array("0cb5250A-c3AD-AcE9-c8cc-4eB6EcA6f9c0".utf8)
        var cases: [[UInt8]] = [valid, Array(valid.dropLast()), valid + [UInt8(ascii: "0")], []]
        for i in 0..<36 {
            for b in 0...255 {
                var v = valid
                v[i] = UInt8(b)
                cases.append(v)
            }
        }
        for c in cases {
            let got = c.withUnsafeBufferPointer { ValueType.isUUID($0) }
            #expect(got == reference(c), "\(String(decoding: c, as: UTF8.self))")
        }
    }

    @Test func valueCheckAcceptsWhatItsTypeAccepts() {
        let memory = FrozenMemory()
        let types: [ValueType] = [.int, .uuid, .slug, .string, .oneOf(["orders", "settings", "ü"]), .oneOf([])]
        let values = ["", "0", "42", "007", "orders", "order", "settings", "ü", "u", "slug-1", "Slug",
                      "0cb5250a-c3ad-ace9-c8cc-4eb6eca6f9c0", String(repeating: "x", count: 300)]
        for type in types {
            let check = ValueCheck(type, in: memory)
            for value in values {
                var copy = value
                let (fast, plain) = copy.withUTF8 { (check.accepts(safeBytes: $0), type.accepts(safeBytes: $0)) }
                #expect(fast == plain, "\(type.displayName) \(value)")
            }
        }
    }

    /// `decode` says a `%XX` needs checking exactly when the checks could refuse what it
    /// decoded to; and when it says not, they pass.
    @Test func percentDecodingFlagsWhatTheChecksCouldRefuse() throws {
        for b in 0...255 {
            let hex = String(b, radix: 16, uppercase: true)
            let raw = Array("a%\(hex.count == 1 ? "0" + hex : hex)b".utf8)
            try raw.withUnsafeBufferPointer { input in
                try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: input.count) { out in
                    let (_, end, needsCheck) = try PercentCoding.decode(input, from: 0, limit: input.count, stop: 0, alsoStop: 0,
                                                                        into: out, at: 0, what: "test")
                    let expected = b < 0x21 || b >= 0x7F || b == 0x2F || b == 0x5C
                    #expect(needsCheck == expected, "%\(hex)")
                    #expect(end == 3 && out[1] == UInt8(b))
                }
            }
        }
    }

    /// The eight-byte copy and the branch-free loop encode as the byte-by-byte rule does.
    @Test func percentEncodingMatchesTheBytewiseRule() {
        var source = Noise(state: 9)
        let alphabet = Array("aZ09-._~%/?&=;+é😀 \"".utf8)
        for length in 0..<40 {
            for _ in 0..<40 {
                let bytes = (0..<length).map { _ in source.next() % 3 == 0 ? source.next() : alphabet[Int(source.next()) % alphabet.count] }
                for (safe, lowercasing) in [(PercentCoding.pathSafe, false), (PercentCoding.querySafe, false), (PercentCoding.pathSafe, true)] {
                    var expected: [UInt8] = []
                    for raw in bytes {
                        let c = lowercasing ? ASCII.lowercased(raw) : raw
                        if safe[Int(c)] { expected.append(c) } else {
                            expected += [UInt8(ascii: "%"), Hex.digit(c >> 4, uppercase: true), Hex.digit(c & 0x0F, uppercase: true)]
                        }
                    }
                    let got: [UInt8] = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * length + 1) { buffer in
                        var out = CanonicalWriter(buffer)
                        bytes.withUnsafeBufferPointer { input in
                            safe.withUnsafeBufferPointer { PercentCoding.encode(input, safe: $0, lowercasing: lowercasing, into: &out) }
                        }
                        return Array(buffer[0..<out.count])
                    }
                    #expect(got == expected, "\(bytes)")
                }
            }
        }
    }

    /// Every scalar from U+0080 to U+07FF in a path: the prescan's inline two-byte path
    /// refuses exactly the forbidden ones, as the general path does.
    @Test func prescanTakesTwoByteScalarsAsTheGeneralPathDoes() {
        for v in UInt32(0x80)...0x7FF {
            let scalar = Unicode.Scalar(v)!
            let link = "https://example.com/help/a" + String(Character(scalar)) + "b"
            let result = shopTable.check(link)
            if ForbiddenCharacters.contains(scalar) {
                guard case .rejected(let rejection) = result else {
                    Issue.record("U+\(String(v, radix: 16)) accepted"); continue
                }
                #expect(rejection.code == .forbiddenCharacter, "U+\(String(v, radix: 16))")
            } else {
                guard case .accepted = result else { Issue.record("U+\(String(v, radix: 16)) refused: \(result)"); continue }
            }
        }
    }

    /// A truncated or broken two-byte sequence after the inline path's lead bytes is still
    /// refused as invalid UTF-8 at its offset.
    @Test func prescanRefusesBrokenTwoByteSequences() {
        for bytes in [[0xC3], [0xC3, 0x41], [0xC3, 0xC3], [0xD7, 0xFF], [0xC2, 0x20]] as [[UInt8]] {
            let link = Array("https://example.com/help/".utf8) + bytes
            let result = link.withUnsafeBufferPointer { shopTable.check(utf8: $0) }
            guard case .rejected(let rejection) = result else { Issue.record("\(bytes) accepted"); continue }
            #expect(rejection.code == .malformed, "\(bytes): \(rejection.message)")
            #expect(rejection.message.contains("byte offset 25"), "\(bytes): \(rejection.message)")
        }
    }
}
