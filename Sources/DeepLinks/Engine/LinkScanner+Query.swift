/// Query items: decoded once, checked, recorded for the route.
extension LinkScanner {
    /// `text` is everything after `?`; empty (a bare trailing `?`) means no query.
    /// `separators` is the number of `&` in it (counted by the prescan).
    mutating func readQuery(_ text: Range<Int>, separators: Int) throws(LinkRejection) {
        if text.isEmpty { return }
        if separators + 1 > Self.maxItems {
            throw reject(.tooManyQueryItems, "the query has \(separators + 1) items; the limit is \(Self.maxItems)")
        }
        var start = text.lowerBound
        while true {
            let end = try readQueryItem(from: start, limit: text.upperBound)
            if end == text.upperBound { break }
            start = end + 1
        }
        // After every item is read, so a secret anywhere is named before a repeated key.
        for i in 1..<max(itemCount, 1) {
            for previous in 0..<i where Bytes.equal(itemKey(previous), itemKey(i)) {
                throw reject(.duplicateQueryParameter, "query key \(quoted(itemKey(i))) appears more than once")
            }
        }
    }

    /// Reads one `key=value` item starting at `from`; returns where it ends (at `&` or `limit`).
    mutating func readQueryItem(from: Int, limit: Int) throws(LinkRejection) -> Int {
        let index = itemCount + 1
        let amp = UInt8(ascii: "&"), equals = UInt8(ascii: "=")
        let keyStart = decodedCount
        let (keyRawEnd, keyEnd, keyNeedsCheck) = try PercentCoding.decode(input, from: from, limit: limit, stop: amp, alsoStop: equals,
                                                           into: decoded, at: keyStart, what: "query item \(index)")
        if keyRawEnd == from {
            if keyRawEnd == limit || input[keyRawEnd] == amp {
                throw reject(.malformed, "query item \(index) is empty (at byte offset \(from))")
            }
            throw reject(.malformed, "query item \(index) has no key (at byte offset \(from))")
        }
        let key = UnsafeBufferPointer(rebasing: decoded[keyStart..<keyEnd])
        if keyNeedsCheck { try PercentCoding.checkDecoded(key, what: "query key \(quoted(from..<keyRawEnd))") }
        var rawEnd = keyRawEnd
        var valueEnd = keyEnd
        if keyRawEnd < limit, input[keyRawEnd] == equals {
            let valueStart = keyRawEnd + 1
            let needsCheck: Bool
            (rawEnd, valueEnd, needsCheck) = try PercentCoding.decode(input, from: valueStart, limit: limit, stop: amp, alsoStop: amp,
                                                                      into: decoded, at: keyEnd, what: "the value of query key \(quoted(key))")
            if needsCheck {
                try PercentCoding.checkDecoded(UnsafeBufferPointer(rebasing: decoded[keyEnd..<valueEnd]),
                                               what: "the value of query key \(quoted(key))")
            }
        }
        guard itemCount < Self.maxItems else {  // the prescan's count makes this unreachable
            throw reject(.tooManyQueryItems, "the query has more than \(Self.maxItems) items")
        }
        if CredentialKeys.contains(key, in: tables.pointee.credentialKeys) {
            throw reject(.credentialInQuery, "query key \(quoted(key)) carries a credential; secrets do not belong in links")
        }
        itemBounds[4 * itemCount] = UInt16(truncatingIfNeeded: keyStart)
        itemBounds[4 * itemCount + 1] = UInt16(truncatingIfNeeded: keyEnd)
        itemBounds[4 * itemCount + 2] = UInt16(truncatingIfNeeded: keyEnd)
        itemBounds[4 * itemCount + 3] = UInt16(truncatingIfNeeded: valueEnd)
        itemCount += 1
        decodedCount = valueEnd
        return rawEnd
    }

    func itemKey(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: decoded[Int(itemBounds[4 * i])..<Int(itemBounds[4 * i + 1])])
    }

    func itemValue(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: decoded[Int(itemBounds[4 * i + 1])..<Int(itemBounds[4 * i + 3])])  // value starts at key end
    }
}
