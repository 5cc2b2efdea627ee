/// Path segments: decoded once, checked, recorded for matching.
extension LinkScanner {
    /// `text` is the path after its leading `/`; empty means the root path.
    /// `separators` is the number of `/` in it (counted by the prescan).
    mutating func readPath(_ text: Range<Int>, separators: Int) throws(LinkRejection) {
        if text.isEmpty { return }
        if separators + 1 > Self.maxSegments {
            throw reject(.tooManyPathSegments, "the path has \(separators + 1) segments; the limit is \(Self.maxSegments)")
        }
        var start = text.lowerBound
        while true {
            let index = segmentCount + 1
            let (end, decodedEnd, needsCheck) = try PercentCoding.decode(
                input, from: start, limit: text.upperBound, stop: UInt8(ascii: "/"), alsoStop: UInt8(ascii: "/"),
                into: decoded, at: decodedCount, what: "path segment \(index)")
            try acceptSegment(start..<end, decodedEnd: decodedEnd, needsCheck: needsCheck, isLast: end == text.upperBound)
            if end == text.upperBound { break }
            start = end + 1
        }
    }

    /// `needsCheck`: what `PercentCoding.decode` said (only then can the decoded text hold
    /// what the prescan did not see).
    mutating func acceptSegment(_ raw: Range<Int>, decodedEnd end: Int, needsCheck: Bool, isLast: Bool) throws(LinkRejection) {
        let index = segmentCount + 1
        if raw.isEmpty {
            if isLast { throw reject(.trailingSlash, "the path ends with '/'") }
            throw reject(.emptySegment, "path segment \(index) is empty ('//' at byte offset \(raw.lowerBound - 1))")
        }
        let start = decodedCount
        let value = UnsafeBufferPointer(rebasing: decoded[start..<end])
        if needsCheck {  // something was percent-decoded into a byte to look at: check what it became
            try PercentCoding.checkDecoded(value, what: "path segment \(index)")
            for c in value where c == UInt8(ascii: "/") || c == UInt8(ascii: "\\") {
                throw reject(.forbiddenCharacter, "path segment \(index) \(quoted(raw)) decodes to text with '/' or '\\'; a segment cannot contain a path separator")
            }
        }
        if value.count <= 2, value.allSatisfy({ $0 == UInt8(ascii: ".") }) {
            throw reject(.dotSegment, "path segment \(index) \(quoted(raw)) is a dot segment")
        }
        guard segmentCount < Self.maxSegments else {  // the prescan's count makes this unreachable
            throw reject(.tooManyPathSegments, "the path has more than \(Self.maxSegments) segments")
        }
        segmentEnds[segmentCount] = end
        segmentCount += 1
        decodedCount = end
    }
}
