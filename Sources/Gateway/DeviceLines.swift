import Payloads
import StrictJSON

/// The device lines of an `application/x-ndjson` campaign: everything after the first
/// line, one token per line; blank lines and `#` comments skipped. Read straight from the
/// request's bytes, so a million devices never become a million JSON values.
struct DeviceLines: Sequence {
    let body: [UInt8]
    /// Where the first device line starts.
    let start: Int
    /// The 1-based line number of the line at `start`.
    let firstLine: Int

    struct Line {
        let number: Int
        let token: Result<String, ValueProblem>
    }

    struct Iterator: IteratorProtocol {
        let body: [UInt8]
        var position: Int
        var number: Int

        mutating func next() -> Line? {
            body.withUnsafeBufferPointer { bytes in
                while position < bytes.count {
                    let text: Range<Int>
                    if let (line, next) = LineSplitter.line(in: bytes, from: position) {
                        (text, position) = (line, next)
                    } else {
                        text = LineSplitter.lastLine(in: bytes, from: position)!
                        position = bytes.count
                    }
                    number += 1
                    if case .token(let token) = DeviceListLine(UnsafeBufferPointer(rebasing: bytes[text])) {
                        return Line(number: number - 1, token: token)
                    }
                }
                return nil
            }
        }
    }

    func makeIterator() -> Iterator { Iterator(body: body, position: start, number: firstLine) }

    static func isNDJSON(_ contentType: String) -> Bool {
        (contentType.split(separator: ";", maxSplits: 1).first ?? "").trimmingCharacters(in: " \t").lowercased() == "application/x-ndjson"
    }

    /// Splits off the first line (the campaign); nil when there is no newline.
    static func split(_ body: [UInt8]) -> (campaign: ArraySlice<UInt8>, devices: DeviceLines)? {
        guard let newline = body.firstIndex(of: 0x0A) else { return nil }
        return (body[..<newline], DeviceLines(body: body, start: newline + 1, firstLine: 2))
    }
}
