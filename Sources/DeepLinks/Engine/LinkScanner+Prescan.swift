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
        var firstAt: Int?
        /// The scheme's `:` is the first; the second is the first after the scheme.
        var firstColon: Int?
        var secondColon: Int?
    }

    enum ByteClass {
        static let plain: UInt8 = 0, forbidden: UInt8 = 1, unencoded: UInt8 = 2, bracket: UInt8 = 3
        static let hash: UInt8 = 4, question: UInt8 = 5, nonASCII: UInt8 = 6, slash: UInt8 = 7, ampersand: UInt8 = 8
        static let at: UInt8 = 9, colon: UInt8 = 10

        static let table: [UInt8] = {
            var t = [UInt8](repeating: plain, count: 256)
            for c in 0...0x20 { t[c] = forbidden }
            t[0x7F] = forbidden
            for c in "\"<>\\^`{|}".utf8 { t[Int(c)] = unencoded }
            t[Int(UInt8(ascii: "["))] = bracket
            t[Int(UInt8(ascii: "]"))] = bracket
            t[Int(UInt8(ascii: "#"))] = hash
            t[Int(UInt8(ascii: "?"))] = question
            t[Int(UInt8(ascii: "/"))] = slash
            t[Int(UInt8(ascii: "&"))] = ampersand
            t[Int(UInt8(ascii: "@"))] = at
            t[Int(UInt8(ascii: ":"))] = colon
            for c in 0x80...0xFF { t[c] = nonASCII }
            return t
        }()
    }

    /// One pass over the whole link: refuses whitespace, controls, bidi and format
    /// characters anywhere (raw), and notes where the other stages must look.
    func prescan() throws(LinkRejection) -> Landmarks {
        var marks = Landmarks()
        try ByteClass.table.withUnsafeBufferPointer { classes throws(LinkRejection) in
            var i = 0
            let count = input.count
            // Offsets stay below the link's length (at most LinkLimits.maxBytes), so the
            // hot loops step with unchecked additions.
            while true {
                // Most bytes are plain: a tight loop, no dispatch.
                while i &+ 4 <= count, classes[Int(input[i])] | classes[Int(input[i &+ 1])]
                        | classes[Int(input[i &+ 2])] | classes[Int(input[i &+ 3])] == ByteClass.plain { i &+= 4 }
                while i < count, classes[Int(input[i])] == ByteClass.plain { i &+= 1 }
                if i == count { break }
                let c = input[i]
                switch classes[Int(c)] {
                case ByteClass.forbidden:
                    throw reject(.forbiddenCharacter, "the link contains \(CharacterNames.describe(Unicode.Scalar(c))) at byte offset \(i)")
                case ByteClass.nonASCII:
                    guard let (scalar, length) = UTF8Scalar.decode(input, at: i) else {
                        throw reject(.malformed, "the link is not valid UTF-8 at byte offset \(i)")
                    }
                    if ForbiddenCharacters.contains(scalar) {
                        throw reject(.forbiddenCharacter, "the link contains \(CharacterNames.describe(scalar)) at byte offset \(i)")
                    }
                    i += length
                    continue
                case ByteClass.unencoded: if marks.firstUnencoded == nil { marks.firstUnencoded = i }
                case ByteClass.bracket: if marks.firstBracket == nil { marks.firstBracket = i }
                case ByteClass.slash: if marks.firstQuestion == nil { marks.slashes += 1 }
                case ByteClass.ampersand: if marks.firstQuestion != nil { marks.ampersands += 1 }
                case ByteClass.hash: if marks.firstHash == nil { marks.firstHash = i }
                case ByteClass.at: if marks.firstAt == nil { marks.firstAt = i }
                case ByteClass.colon:
                    if marks.firstColon == nil { marks.firstColon = i } else if marks.secondColon == nil { marks.secondColon = i }
                default: if marks.firstQuestion == nil { marks.firstQuestion = i }
                }
                i += 1
            }
        }
        return marks
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
