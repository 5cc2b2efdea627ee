import StrictJSON

/// Stage 1: one pass over every byte of the link.
extension LinkScanner {
    /// Where the characters later stages care about first appear.
    struct Landmarks {
        /// `/` before the first `?`, and `&` after it.
        var slashes = 0
        var ampersands = 0
        var firstUnencoded: Int?
        var firstBracket: Int?
        var firstHash: Int?
        var firstQuestion: Int?
    }

    /// What the pass does at a byte: nothing (plain), add one to a count (counted), or stop
    /// for the byte's class. `@` and `:` are plain: the authority looks for them itself.
    enum ByteClass {
        static let plain: UInt8 = 0, counted: UInt8 = 1, forbidden: UInt8 = 2, unencoded: UInt8 = 3
        static let bracket: UInt8 = 4, hash: UInt8 = 5, question: UInt8 = 6, nonASCII: UInt8 = 7

        /// Before the first `?`: `/` is counted, `?` stops the pass.
        static let beforeQuery: [UInt8] = table(counting: "/", stoppingAtQuestion: true)
        /// After it: `&` is counted, `?` and `/` are plain.
        static let afterQuery: [UInt8] = table(counting: "&", stoppingAtQuestion: false)

        private static func table(counting: Unicode.Scalar, stoppingAtQuestion: Bool) -> [UInt8] {
            var t = [UInt8](repeating: plain, count: 256)
            for c in 0...0x20 { t[c] = forbidden }
            t[0x7F] = forbidden
            for c in "\"<>\\^`{|}".utf8 { t[Int(c)] = unencoded }
            t[Int(UInt8(ascii: "["))] = bracket
            t[Int(UInt8(ascii: "]"))] = bracket
            t[Int(UInt8(ascii: "#"))] = hash
            if stoppingAtQuestion { t[Int(UInt8(ascii: "?"))] = question }
            t[Int(UInt8(ascii: counting))] = counted
            for c in 0x80...0xFF { t[c] = nonASCII }
            return t
        }
    }

    /// One pass over the whole link: refuses whitespace, controls, bidi and format
    /// characters anywhere (raw), and notes where the other stages must look. It runs in
    /// two parts, before and after the first `?`, so that the separators each part counts
    /// (`/` in the path, `&` in the query) cost no stop.
    func prescan() throws(LinkRejection) -> Landmarks {
        var marks = Landmarks()
        var slashes = 0, ampersands = 0
        let question = try scan(from: 0, tables.pointee.beforeQuery, counting: &slashes, marks: &marks)
        if question < input.count {
            marks.firstQuestion = question
            _ = try scan(from: question + 1, tables.pointee.afterQuery, counting: &ampersands, marks: &marks)
        }
        marks.slashes = slashes
        marks.ampersands = ampersands
        return marks
    }

    /// Scans from `start` to the end of the link, or to a `?` where `classes` stops there:
    /// returns where it stopped.
    private func scan(from start: Int, _ classes: UnsafeBufferPointer<UInt8>, counting counted: inout Int,
                      marks: inout Landmarks) throws(LinkRejection) -> Int {
        // Offsets stay below the link's length (at most LinkLimits.maxBytes), so the hot
        // loops step with unchecked additions.
        var i = start
        var n = 0  // counted bytes, added to `counted` on the way out
        defer { counted &+= n }
        let count = input.count
        while true {
            // Most bytes are plain or counted: a tight loop, no dispatch.
            while i &+ 4 <= count {
                let a = classes[Int(input[i])], b = classes[Int(input[i &+ 1])]
                let c = classes[Int(input[i &+ 2])], d = classes[Int(input[i &+ 3])]
                if a | b | c | d > ByteClass.counted { break }
                n &+= Int(a &+ b &+ c &+ d)
                i &+= 4
            }
            while i < count, classes[Int(input[i])] <= ByteClass.counted {
                n &+= Int(classes[Int(input[i])])
                i &+= 1
            }
            if i == count { return i }
            let c = input[i]
            switch classes[Int(c)] {
            case ByteClass.forbidden:
                throw reject(.forbiddenCharacter, "the link contains \(CharacterNames.describe(Unicode.Scalar(c))) at byte offset \(i)")
            case ByteClass.nonASCII:
                // Two-byte scalars from U+00AE to U+05FF (Latin, Greek, Cyrillic, …) are
                // valid and never forbidden (`ForbiddenCharacters`): passed here directly.
                if c >= 0xC2, c <= 0xD7, i &+ 1 < count {
                    let c1 = input[i &+ 1]
                    if c1 & 0xC0 == 0x80, c > 0xC2 || c1 >= 0xAE {
                        i &+= 2
                        continue
                    }
                }
                guard let (scalar, length) = UTF8Scalar.decode(input, at: i) else {
                    throw reject(.malformed, "the link is not valid UTF-8 at byte offset \(i)")
                }
                if ForbiddenCharacters.contains(scalar) {
                    throw reject(.forbiddenCharacter, "the link contains \(CharacterNames.describe(scalar)) at byte offset \(i)")
                }
                i &+= length
                continue
            case ByteClass.unencoded: if marks.firstUnencoded == nil { marks.firstUnencoded = i }
            case ByteClass.bracket: if marks.firstBracket == nil { marks.firstBracket = i }
            case ByteClass.hash: if marks.firstHash == nil { marks.firstHash = i }
            default: return i  // the first `?`
            }
            i &+= 1
        }
    }

    /// ASCII that RFC 3986 never allows raw. WHATWG parsers "repair" some of these
    /// (`\` becomes `/`); the canonicaliser refuses instead. Brackets are left to the
    /// host check (as an IP literal) when they are in an https authority.
    func checkUnencodedASCII(_ marks: Landmarks, ipLiteralAllowedBefore authorityEnd: Int) throws(LinkRejection) {
        var bracket = marks.firstBracket
        if let b = bracket, b < authorityEnd {
            bracket = (authorityEnd..<input.count).first { input[$0] == UInt8(ascii: "[") || input[$0] == UInt8(ascii: "]") }
        }
        let first: Int
        switch (marks.firstUnencoded, bracket) {
        case (nil, nil): return
        case (let u?, nil): first = u
        case (nil, let b?): first = b
        case (let u?, let b?): first = min(u, b)
        }
        let shown = TextSafety.quoted(UnicodeScalar(input[first]))
        if input[first] == UInt8(ascii: "[") || input[first] == UInt8(ascii: "]") {
            throw reject(.malformed, "character \(shown) at byte offset \(first) is only allowed around an IP literal, and those are not accepted")
        }
        throw reject(.malformed, "character \(shown) at byte offset \(first) must be percent-encoded")
    }
}
