import Foundation
import Testing

@Suite struct CheckLinkStdinCLITests {
    func lines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func oneJSONLinePerInputLineInOrder() throws {
        let input = "https://example.com/product/1\r\n\nshop://help/a/b\nhttps://example.com/profile?tab=orders"
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data(input.utf8))
        #expect(r.status == 1)
        #expect(lines(r.stdout) == [
            #"{"ok":true,"canonical":"https://example.com/product/1","route":"product","params":{"id":"1"},"query":{}}"#,
            #"{"ok":false,"error":{"code":"malformed","message":"the link is empty"}}"#,
            #"{"ok":true,"canonical":"https://example.com/help/a/b","route":"help","params":{"*":"a/b"},"query":{}}"#,
            #"{"ok":true,"canonical":"https://example.com/profile?tab=orders","route":"profile","params":{},"query":{"tab":"orders"}}"#,
            "",
        ])
    }

    @Test func allAcceptedExitsZero() throws {
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data("https://example.com/profile\nshop://product/7\n".utf8))
        #expect(r.status == 0)
        #expect(lines(r.stdout).count == 3)
    }

    /// Many lines of varying length, CRLF and LF mixed, so lines and CRLF pairs straddle
    /// the 64 KiB read chunks: every line is answered once, in order.
    @Test func linesAcrossReadChunksStayInOrder() throws {
        var input = ""
        var expected: [String] = []
        for i in 0..<20_000 {
            let valid = i % 3 != 0
            input += valid ? "https://example.com/product/\(i)" : "https://evil.example/product/\(i)"
            input += i % 2 == 0 ? "\r\n" : "\n"
            expected.append(valid ? "https://example.com/product/\(i)" : "hostNotAllowed")
        }
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data(input.utf8))
        #expect(r.status == 1)
        let got = lines(r.stdout).dropLast().map { line -> String in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["canonical"] as? String) ?? ((object?["error"] as? [String: Any])?["code"] as? String ?? line)
        }
        #expect(got == expected)
    }

    @Test func emptyInputGivesNoOutput() throws {
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data())
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
    }

    @Test func onlyOneTrailingCRIsDropped() throws {
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data("https://example.com/profile\r\r\n".utf8))
        #expect(r.status == 1)
        #expect(r.stdout.contains(#""ok":false"#))
    }

    @Test func invalidUTF8IsMalformed() throws {
        var input = Array("https://example.com/x".utf8)
        input += [0xFF, 0xFE]
        input += Array("y\nhttps://example.com/profile\n".utf8)
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data(input))
        #expect(r.status == 1)
        #expect(lines(r.stdout).first == #"{"ok":false,"error":{"code":"malformed","message":"the link is not valid UTF-8 at byte offset 21"}}"#)
        #expect(lines(r.stdout)[1].hasPrefix(#"{"ok":true"#))
    }

    @Test func unsafeCharactersAreEscapedInJSON() throws {
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data("https://exa\u{1B}mple.com/\u{2028}\n".utf8))
        #expect(r.status == 1)
        #expect(!r.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{2028}" })
    }

    @Test func lineJustOverTheLimitIsTooLong() throws {
        let link = "https://example.com/help/" + String(repeating: "a", count: 3000)
        let r = try CLI.run(["check-link", "--stdin"], stdin: Data((link + "\n").utf8))
        #expect(r.stdout.contains(#""code":"tooLong""#))
        #expect(r.stdout.contains("link is \(link.utf8.count) bytes"))
    }

    /// A 50 MB line is answered without being held: the process's peak memory, measured
    /// by /usr/bin/time (Debian `time`; a child forked straight from this test process
    /// would inherit its RSS), stays far below the line's size.
    @Test func hugeLineIsTooLongWithBoundedMemory() throws {
        let size = 50 << 20
        var input = Data(count: size)
        input.withUnsafeMutableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            for (i, b) in "https://example.com/help/".utf8.enumerated() { bytes[i] = b }
            for i in 25..<size { bytes[i] = UInt8(ascii: "a") }
        }
        input.append(contentsOf: Array("\nhttps://example.com/profile\n".utf8))
        let r = try CLI.run(["check-link", "--stdin"], stdin: input, wrapper: ["/usr/bin/time", "-f", "maxrss=%M"])
        #expect(r.status == 1)
        #expect(lines(r.stdout) == [
            #"{"ok":false,"error":{"code":"tooLong","message":"link is 52428800 bytes; the limit is 2048"}}"#,
            #"{"ok":true,"canonical":"https://example.com/profile","route":"profile","params":{},"query":{}}"#,
            "",
        ])
        let report = r.stderr.split(separator: "\n").last { $0.hasPrefix("maxrss=") }
        let peakKB = report.flatMap { Int($0.dropFirst("maxrss=".count)) } ?? -1
        #expect(peakKB > 0 && peakKB < 40 * 1024, "peak RSS \(peakKB) KB for a 51200 KB line")
    }
}
