import Testing
@testable import StrictJSON

/// A source that hands out its bytes in blocks of the given sizes (cycled), then fails or
/// ends: the reader must give the same lines whatever the blocks.
struct ScriptedSource: ByteSource {
    let bytes: [UInt8]
    let blocks: [Int]
    var failAfter: Int? = nil
    var offset = 0
    var calls = 0

    mutating func read(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(ByteReadError) -> Int {
        if let failAfter, offset >= failAfter { throw ByteReadError("Input/output error") }
        let limit = failAfter ?? bytes.count
        let n = min(blocks[calls % blocks.count], buffer.count, limit - offset)
        calls += 1
        for i in 0..<n { buffer[i] = bytes[offset + i] }
        offset += n
        return n
    }
}

enum Seen: Equatable, CustomStringConvertible {
    case text(String), tooLong(Int)
    var description: String {
        switch self {
        case .text(let s): return "text(\(s.debugDescription))"
        case .tooLong(let n): return "tooLong(\(n))"
        }
    }
}

func readAll(_ source: ScriptedSource, maxLineBytes: Int, blockSize: Int = 16) -> ([Seen], ByteReadError?) {
    var reader = LineReader(source, maxLineBytes: maxLineBytes, blockSize: blockSize)
    var seen: [Seen] = []
    do throws(ByteReadError) {
        while let line = try reader.next() {
            switch line {
            case .text(let b): seen.append(.text(String(decoding: b, as: UTF8.self)))
            case .tooLong(let n): seen.append(.tooLong(n))
            }
        }
        return (seen, nil)
    } catch {
        return (seen, error)
    }
}

func splitInMemory(_ text: String) -> [String] {
    var lines: [String] = []
    Array(text.utf8).withUnsafeBufferPointer { bytes in
        LineSplitter.forEachLine(in: bytes) { lines.append(String(decoding: $0, as: UTF8.self)) }
    }
    return lines
}

@Suite struct LineSplitterTests {
    @Test func theOneRuleLFEndsALineOneCRBeforeItIsDroppedALastLineCounts() {
        #expect(splitInMemory("") == [])
        #expect(splitInMemory("\n") == [""])
        #expect(splitInMemory("a\nb") == ["a", "b"])
        #expect(splitInMemory("a\r\nb\r\n") == ["a", "b"])
        #expect(splitInMemory("a\r\r\n") == ["a\r"], "only one CR")
        #expect(splitInMemory(" a \t\n") == [" a \t"], "nothing else is trimmed")
        #expect(splitInMemory("a\rb\n\r") == ["a\rb", ""], "a lone CR is text; a final lone CR is the terminator's")
        #expect(splitInMemory("\n\n\nlast") == ["", "", "", "last"])
    }

    @Test func aSmallWholeInputIsSplitByTheSameRule() {
        for text in ["", "\n", "a\nb", "a\r\nb\r\n", "a\r\r\n", "a\rb\n\r", "\n\n\nlast", "żółw\r\nx"] {
            #expect(LineSplitter.lines(of: Array(text.utf8)) == splitInMemory(text), "\(text.debugDescription)")
        }
        #expect(LineSplitter.lines(of: [0x61, 0xFF, 0x0A]) == ["a\u{FFFD}"], "invalid UTF-8 is shown, not dropped")
    }

    @Test func theWordAtATimeSearchFindsEveryLFAtEveryOffset() {
        for length in 0..<40 {
            for at in 0..<max(length, 1) where length > 0 {
                var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                bytes[at] = 0x0A
                // Bytes that look like LF to a careless bit trick: 0x0B, 0x8A, 0x09.
                for i in 0..<length where i != at { bytes[i] = [0x0B, 0x8A, 0x09, 0x78][i % 4] }
                for start in 0...at {
                    let found = bytes.withUnsafeBufferPointer { LineSplitter.firstLineFeed(in: $0, from: start) }
                    #expect(found == at, "length \(length), LF at \(at), from \(start)")
                }
            }
            let none = [UInt8](repeating: 0x0B, count: length)
            #expect(none.withUnsafeBufferPointer { LineSplitter.firstLineFeed(in: $0, from: 0) } == nil)
        }
    }

    @Test func theReaderGivesTheSameLinesWhateverTheBlocks() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["", "a", "bb\r", "ccc", "\r", "dddddddddddddddddddd", "żółw", "e\rf"]
        for _ in 0..<200 {
            let count = Int.random(in: 0...12, using: &rng)
            var text = (0..<count).map { _ in pieces.randomElement(using: &rng)! }.joined(separator: "\n")
            if Bool.random(using: &rng) { text += "\n" }
            let expected = splitInMemory(text).map { $0.utf8.count > 12 ? Seen.tooLong($0.utf8.count) : Seen.text($0) }
            for blocks in [[1], [3, 1, 7], [64]] {
                let (seen, error) = readAll(ScriptedSource(bytes: Array(text.utf8), blocks: blocks), maxLineBytes: 12, blockSize: 8)
                #expect(error == nil)
                #expect(seen == expected, "\(text.debugDescription) in blocks \(blocks)")
            }
        }
    }

    @Test func anOverlongLineIsCountedNotHeldAndTheNextLineIsIntact() {
        let long = String(repeating: "z", count: 1000)
        let text = "ok\n\(long)\r\nnext\n\(long)"
        let (seen, error) = readAll(ScriptedSource(bytes: Array(text.utf8), blocks: [5, 64]), maxLineBytes: 10, blockSize: 16)
        #expect(error == nil)
        #expect(seen == [.text("ok"), .tooLong(1000), .text("next"), .tooLong(1000)])
    }

    /// The point of the reader: a failed read is an error after the lines already read,
    /// not the end of the input, and asking again does not turn it into one.
    @Test func aReadErrorIsAnErrorNeverTheEndOfTheInput() throws {
        let text = Array("one\ntwo\nthree\nfour\n".utf8)
        let source = ScriptedSource(bytes: text, blocks: [4], failAfter: 10)
        var reader = LineReader(source, maxLineBytes: 100, blockSize: 4)
        var seen: [String] = []
        #expect(throws: ByteReadError("Input/output error")) {
            while let line = try reader.next() {
                if case .text(let b) = line { seen.append(String(decoding: b, as: UTF8.self)) }
            }
        }
        #expect(seen == ["one", "two"], "the lines before the failure, and not the cut-off \"th\"")
        #expect(reader.lineNumber == 2)
        #expect(throws: ByteReadError("Input/output error")) { _ = try reader.next() }
    }
}

@Suite struct HexTests {
    @Test func oneEncoderForBytesNumbersAndEscapes() {
        #expect(Hex.encode([0x00, 0xAB, 0x0F, 0xFF]) == "00ab0fff")
        #expect(Hex.encode([0xAB, 0x0F], uppercase: true) == "AB0F")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.padded(0x2A, width: 4) == "002a")
        #expect(Hex.padded(0, width: 1) == "0")
        #expect(Hex.padded(0xDEADBEEF, width: 4, uppercase: true) == "DEADBEEF", "never cut")
        #expect(Hex.padded(.max, width: 16) == "ffffffffffffffff")
        for n in UInt8(0)...15 {
            #expect(Hex.digit(n) == Array("0123456789abcdef".utf8)[Int(n)])
            #expect(Hex.digit(n, uppercase: true) == Array("0123456789ABCDEF".utf8)[Int(n)])
        }
        var out: [UInt8] = []
        Hex.appendPercentEscape(0x2F, to: &out)
        Hex.appendPercentEscape(0xC5, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "%2F%C5")
        for v in [0, 1, 0x1F, 0x202E, 0xFFFF] as [UInt64] {
            #expect(Hex.padded(v, width: 4) == String(repeating: "0", count: max(0, 4 - String(v, radix: 16).count)) + String(v, radix: 16))
        }
        // After a prefix (an apns-id: the campaign's prefix and the device's index), and
        // from a slice or a sequence that is not contiguous.
        #expect(Hex.padded(0x2A, width: 12, after: "01234567-89ab-4cde-8f01-") == "01234567-89ab-4cde-8f01-00000000002a")
        #expect(Hex.padded(0xFFFF_FFFF_FFFF, width: 12, after: "é-") == "é-ffffffffffff")
        #expect(Hex.padded(0x1_0000_0000_0000, width: 12, after: "x") == "x1000000000000", "never cut")
        let bytes: [UInt8] = Array(0...255)
        #expect(Hex.encode(bytes[16..<18]) == "1011")
        #expect(Hex.encode(bytes.lazy.filter { $0 == 0xAB || $0 == 0x01 }) == "01ab")
        #expect(Hex.encode(bytes) == bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
    }

    /// Eight bytes at a time and the rest one by one: every byte value, at every position
    /// of a word and of the tail, against the plain definition.
    @Test func lowercaseDigitsAgreeWithTheDefinitionForEveryByteAtEveryPosition() {
        func isDigit(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x61...0x66).contains(b) }
        func check(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(Hex.isLowercaseDigits) }
        #expect(check([]))
        #expect(check(Array("0123456789abcdef0123456789abcdef".utf8)))
        for length in [1, 7, 8, 9, 16, 19] {
            for position in 0..<length {
                for value in UInt8(0)...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "7"), count: length)
                    bytes[position] = value
                    #expect(check(bytes) == isDigit(value), "byte \(value) at \(position) of \(length)")
                }
            }
        }
    }
}

@Suite struct QuotingTests {
    @Test func oneQuotingFunctionForTextAndCharacters() {
        #expect(TextSafety.quoted("route") == "\"route\"")
        #expect(TextSafety.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(TextSafety.quoted("x\u{202E}y\n") == #""x\u202ey\u000a""#)
        #expect(TextSafety.quoted(Unicode.Scalar("g")) == "'g'")
        #expect(TextSafety.quoted(Unicode.Scalar(0x200B)!) == #"'\u200b'"#)
        // The fast path for plain ASCII and the escaping path agree.
        for text in ["", "plain", "with space", "tab\there", "ünïcode"] {
            #expect(TextSafety.quoted(text) == "\"" + TextSafety.escapedForDisplay(text) + "\"")
        }
    }
}
