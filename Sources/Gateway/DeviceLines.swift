import Payloads

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
            while position < body.count {
                let lineStart = position
                var end = lineStart
                while end < body.count && body[end] != 0x0A { end += 1 }
                position = end + 1
                number += 1
                var first = lineStart
                var last = end
                while first < last && (body[first] == 0x20 || body[first] == 0x09) { first += 1 }
                while last > first && (body[last - 1] == 0x20 || body[last - 1] == 0x09 || body[last - 1] == 0x0D) { last -= 1 }
                if first == last || body[first] == 0x23 { continue }  // blank or # comment
                let text = String(decoding: body[first..<last], as: UTF8.self)
                return Line(number: number - 1, token: DeviceToken.normalize(text))
            }
            return nil
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
