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
        while i < limit {
            // Eight bytes at a time while none is a stop or `%` (o <= i, so o + 8 <= limit).
            while i &+ 8 <= limit {
                let word = source.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if ByteWord.contains(word, stop) || ByteWord.contains(word, alsoStop) || ByteWord.contains(word, UInt8(ascii: "%")) { break }
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
            encode(bytes, safe: safe, lowercasing: true, into: &out, ASCII.lowercased)
        } else {
            encode(bytes, safe: safe, lowercasing: false, into: &out) { $0 }
        }
    }

    @inline(__always)
    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, safe: UnsafeBufferPointer<Bool>, lowercasing: Bool,
                               into out: inout CanonicalWriter, _ map: (UInt8) -> UInt8) {
        // The usual case: room for the worst (every byte as %XX), so no check per byte.
        if let dst = out.room(for: 3 * bytes.count), let base = bytes.baseAddress {
            let source = UnsafeRawPointer(base), target = UnsafeMutableRawPointer(dst)
            var i = 0, o = 0  // o at most 3 × i: unchecked steps
            let count = bytes.count
            while i < count {
                // Eight unreserved bytes (safe in both sets) are copied as one word.
                if i &+ 8 <= count,
                   let word = ByteWord.unreserved(source.loadUnaligned(fromByteOffset: i, as: UInt64.self), lowercasing: lowercasing) {
                    target.storeBytes(of: word, toByteOffset: o, as: UInt64.self)
                    i &+= 8
                    o &+= 8
                    continue
                }
                // Otherwise up to eight bytes one by one, without a branch: each stores
                // three (`c` or `%XX`) and advances by one or three, the next overwriting
                // what a safe one left beyond it.
                let stop = min(i &+ 8, count)
                while i < stop {
                    let c = map(base[i])
                    let isSafe = safe[Int(c)]
                    dst[o] = isSafe ? c : UInt8(ascii: "%")
                    dst[o &+ 1] = Hex.digit(c >> 4, uppercase: true)
                    dst[o &+ 2] = Hex.digit(c & 0x0F, uppercase: true)
                    o &+= isSafe ? 1 : 3
                    i &+= 1
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
