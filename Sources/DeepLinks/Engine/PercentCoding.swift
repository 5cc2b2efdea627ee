import StrictJSON

/// Percent-decoding (exactly once) and the canonical re-encoding.
enum PercentCoding {
    /// Decodes from `input[from]` up to `limit` or the first `stop` or `alsoStop` byte,
    /// writing into `out` from `start`, which must be at most `from` (decoded text is never
    /// longer than its input, so it fits where it came from). Returns where the raw text
    /// ended, where the decoded bytes end, and whether a `%XX` decoded to a byte that needs
    /// `checkDecoded` (outside `!`...`~`, or `/` or `\`): when none did, every decoded byte
    /// is printable ASCII or raw text the prescan already checked, so the check would pass.
    /// Throws `invalidPercentEncoding` for `%` not followed by two hex digits.
    @inline(__always)
    static func decode(_ input: UnsafeBufferPointer<UInt8>, from: Int, limit: Int, stop: UInt8, alsoStop: UInt8,
                       into out: UnsafeMutableBufferPointer<UInt8>, at start: Int,
                       what: @autoclosure () -> LinkMessage) throws(LinkRejection) -> (rawEnd: Int, decodedEnd: Int, needsCheck: Bool) {
        // Offsets stay within the link (at most LinkLimits.maxBytes): unchecked steps.
        var o = start
        var i = from
        var needsCheck = false
        let source = UnsafeRawPointer(input.baseAddress!), target = UnsafeMutableRawPointer(out.baseAddress!)
        let stops = Self.pattern(stop), alsoStops = Self.pattern(alsoStop), percents = Self.pattern(UInt8(ascii: "%"))
        while i < limit {
            // Eight bytes at a time while none is a stop or `%` (o <= i, so o + 8 <= limit).
            while i &+ 8 <= limit {
                let word = source.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if Self.hasByte(word, stops) || Self.hasByte(word, alsoStops) || Self.hasByte(word, percents) { break }
                target.storeBytes(of: word, toByteOffset: o, as: UInt64.self)
                i &+= 8
                o &+= 8
            }
            guard i < limit else { break }
            let c = input[i]
            if c == stop || c == alsoStop { break }
            if c == UInt8(ascii: "%") {
                guard i &+ 2 < limit, let hi = ASCII.hexValue(input[i &+ 1]), let lo = ASCII.hexValue(input[i &+ 2]) else {
                    throw LinkRejection(code: .invalidPercentEncoding,
                                        "\(what()): '%' at byte offset \(i) is not followed by two hex digits")
                }
                let b = hi << 4 | lo
                if b &- 0x21 > 0x5D || b == UInt8(ascii: "/") || b == UInt8(ascii: "\\") { needsCheck = true }
                out[o] = b
                i &+= 3
            } else {
                out[o] = c
                i &+= 1
            }
            o &+= 1
        }
        return (i, o, needsCheck)
    }

    /// `byte` in every byte of a word.
    @inline(__always)
    static func pattern(_ byte: UInt8) -> UInt64 { 0x0101_0101_0101_0101 &* UInt64(byte) }

    /// True when some byte of `word` equals the byte `pattern` repeats (the usual zero-byte
    /// test: exact for whether there is one).
    @inline(__always)
    static func hasByte(_ word: UInt64, _ pattern: UInt64) -> Bool {
        let x = word ^ pattern
        return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 != 0
    }

    /// Decodes all of `input[range]` (no stop byte: NUL, the sentinel, never gets this far
    /// because the prescan refuses it).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                       into out: UnsafeMutableBufferPointer<UInt8>, at start: Int,
                       what: @autoclosure () -> LinkMessage) throws(LinkRejection) -> Int {
        try decode(input, from: range.lowerBound, limit: range.upperBound, stop: 0, alsoStop: 0,
                   into: out, at: start, what: what()).decodedEnd
    }

    /// Checks decoded bytes: valid UTF-8, and no character a link may not carry.
    static func checkDecoded(_ bytes: UnsafeBufferPointer<UInt8>, what: @autoclosure () -> LinkMessage) throws(LinkRejection) {
        var i = 0
        while i < bytes.count {
            guard let (scalar, length) = UTF8Scalar.decode(bytes, at: i) else {
                throw LinkRejection(code: .invalidPercentEncoding, "\(what()) is not valid UTF-8 after percent-decoding")
            }
            if ForbiddenCharacters.contains(scalar) {
                throw LinkRejection(code: .forbiddenCharacter,
                                    "\(what()) contains \(CharacterNames.describe(scalar)) after percent-decoding")
            }
            i += length
        }
    }

    /// Characters a canonical path segment carries unencoded: RFC 3986 pchar minus `;`
    /// (old `NSURL` splits path parameters at `;`).
    static let pathSafe: [Bool] = table(extra: "!$&'()*+,=:@")
    /// Characters a canonical query key or value carries unencoded. Not `&`, `=`, `;`
    /// (separators) and not `+` (form decoders read it as a space).
    static let querySafe: [Bool] = table(extra: "!$'()*,/:?@")

    private static func table(extra: String) -> [Bool] {
        var t = [Bool](repeating: false, count: 256)
        for c in 0..<128 where ASCII.isUnreserved(UInt8(c)) { t[c] = true }
        for c in extra.utf8 { t[Int(c)] = true }
        return t
    }

    /// Appends `bytes` percent-encoding everything not in `safe` (uppercase hex), ASCII
    /// letters lowercased first when `lowercasing` (a uuid).
    @inline(__always)
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, safe: UnsafeBufferPointer<Bool>,
                       lowercasing: Bool = false, into out: inout CanonicalWriter) {
        // Two loops, so the usual one does not test the flag per byte.
        if lowercasing {
            encode(bytes, safe: safe, into: &out, ASCII.lowercased)
        } else {
            encode(bytes, safe: safe, into: &out) { $0 }
        }
    }

    @inline(__always)
    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, safe: UnsafeBufferPointer<Bool>,
                               into out: inout CanonicalWriter, _ map: (UInt8) -> UInt8) {
        // The usual case: room for the worst (every byte as %XX), so no check per byte.
        if let dst = out.room(for: 3 * bytes.count) {
            var o = 0  // at most 3 × bytes.count: unchecked steps
            for raw in bytes {
                let c = map(raw)
                if safe[Int(c)] {
                    dst[o] = c
                    o &+= 1
                } else {
                    dst[o] = UInt8(ascii: "%")
                    dst[o &+ 1] = Hex.digit(c >> 4, uppercase: true)
                    dst[o &+ 2] = Hex.digit(c & 0x0F, uppercase: true)
                    o &+= 3
                }
            }
            out.count += o
            return
        }
        for raw in bytes {
            let c = map(raw)
            if safe[Int(c)] {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(Hex.digit(c >> 4, uppercase: true))
                out.append(Hex.digit(c & 0x0F, uppercase: true))
            }
        }
    }
}
