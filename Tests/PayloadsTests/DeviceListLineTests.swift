import Testing
import TestSupport
@testable import Payloads

@Suite struct DeviceListLineTests {
    static func line(_ text: String) -> DeviceListLine {
        Array(text.utf8).withUnsafeBufferPointer { DeviceListLine($0) }
    }

    @Test func blankAndCommentLinesAreSkippedTokensAreTrimmedTheRestIsAProblem() {
        let token = TestTokens.device
        for skipped in ["", " ", "\t \r", "# a comment", "  #indented comment"] {
            guard case .skipped = Self.line(skipped) else { Issue.record("\(skipped.debugDescription) not skipped"); continue }
        }
        for padded in [token, " \t\(token) \r", "\r\(token)", token.uppercased()] {
            guard case .token(.success(let t)) = Self.line(padded) else { Issue.record("\(padded.debugDescription)"); continue }
            #expect(t == token)
        }
        guard case .token(.failure(let problem)) = Self.line("not-a-token") else { Issue.record("accepted"); return }
        #expect(problem.message == "not hex: 'n' at character 1")
    }

    /// The count before a list is read agrees with reading it, line by line.
    @Test func isDeviceIsExactlyWhatReadingTheLineAccepts() {
        let token = TestTokens.device
        for text in ["", " ", "# \(token)", token, " \t\(token) \r", token.uppercased(), "<\(token)>", String(token.dropLast()),
                     String(token.dropLast(2)), "not-a-token", String(repeating: "a", count: 200), String(repeating: "a", count: 202), "é"] {
            let reading: Bool = if case .token(.success) = Self.line(text) { true } else { false }
            #expect(Array(text.utf8).withUnsafeBufferPointer(DeviceListLine.isDevice) == reading, "\(text.debugDescription)")
        }
    }
}
