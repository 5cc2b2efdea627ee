import StrictJSON

/// Scheme, user info, port and host.
extension LinkScanner {
    func readScheme() throws(LinkRejection) -> (Scheme, Int) {
        if Self.startsWithHTTPSAndSlashes(input) { return (.https, 6) }
        var end = 0
        while end < input.count, input[end] != UInt8(ascii: ":") {
            let c = input[end]
            if c == UInt8(ascii: "/") || c == UInt8(ascii: "?") || c == UInt8(ascii: "#") { break }
            end += 1
        }
        guard end < input.count, input[end] == UInt8(ascii: ":"), end > 0 else {
            throw reject(.malformed, "the link has no scheme (expected \(table.expectedSchemes))")
        }
        guard ASCII.isAlpha(input[0]) else {
            throw reject(.malformed, "the scheme must start with a letter")
        }
        for i in 1..<end {
            let c = input[i]
            guard ASCII.isAlpha(c) || ASCII.isDigit(c) || c == 0x2B || c == 0x2D || c == 0x2E else {
                throw reject(.malformed, "the scheme has an invalid character at byte offset \(i)")
            }
        }
        let scheme = UnsafeBufferPointer(rebasing: input[0..<end])
        if Self.isHTTPS(scheme) { return (.https, end + 1) }
        if equalsIgnoringCase(scheme, tables.pointee.schemeBytes) { return (.app, end + 1) }
        throw reject(.schemeNotAllowed, "scheme \(quoted(scheme)) is not allowed (accepted: \(table.acceptedSchemes))")
    }

    /// `https://`, the scheme in any case: most links, so one 8-byte comparison before
    /// the general scan. Setting bit 5 lowercases an ASCII letter and maps nothing else
    /// onto `h`, `t`, `p` or `s`, so the test is exact.
    @inline(__always)
    static func startsWithHTTPSAndSlashes(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
        guard input.count >= 8 else { return false }
        let word = UInt64(littleEndian: UnsafeRawPointer(input.baseAddress!).loadUnaligned(as: UInt64.self))
        let lowerScheme: UInt64 = 0x0000_0020_2020_2020  // bit 5 of the first five bytes
        let expected: UInt64 = 0x2F2F_3A73_7074_7468  // "https://", little-endian
        return word | lowerScheme == expected
    }

    /// `https` in any case.
    @inline(__always)
    static func isHTTPS(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        scheme.count == 5 && ASCII.lowercased(scheme[0]) == UInt8(ascii: "h") && ASCII.lowercased(scheme[1]) == UInt8(ascii: "t")
            && ASCII.lowercased(scheme[2]) == UInt8(ascii: "t") && ASCII.lowercased(scheme[3]) == UInt8(ascii: "p")
            && ASCII.lowercased(scheme[4]) == UInt8(ascii: "s")
    }

    /// The authority is searched for `@` and `:` itself (the prescan does not note them),
    /// only when the pass that found its end saw one (`mayHoldUserInfoOrPort`): nothing
    /// before it holds an `@`, and only the scheme's own `:`, so the first of each in it is
    /// also the link's first `@` and its first `:` after the scheme.
    func checkAuthority(_ range: Range<Int>, scheme: Scheme, mayHoldUserInfoOrPort: Bool) throws(LinkRejection) {
        if mayHoldUserInfoOrPort, let at = firstIndex(of: "@", in: range) {
            throw reject(.userInfoNotAllowed, "the link has user info (\(quoted(range.lowerBound..<at)) before '@'); credentials are not allowed in links")
        }
        if scheme == .https, range.lowerBound < range.upperBound, input[range.lowerBound] == UInt8(ascii: "[") {
            throw reject(.hostNotAllowed, "the host \(quoted(range)) is an IP literal; only listed host names are allowed")
        }
        if mayHoldUserInfoOrPort, let colon = firstIndex(of: ":", in: range) {
            throw reject(.portNotAllowed, "the link has a port (\(quoted((colon + 1)..<range.upperBound)) after ':' at byte offset \(colon)); ports are not allowed")
        }
        if scheme == .https { try checkHost(range) }
    }

    func checkHost(_ range: Range<Int>) throws(LinkRejection) {
        guard !range.isEmpty else { throw reject(.malformed, "the link has an empty host") }
        let host = UnsafeBufferPointer(rebasing: input[range])
        // Listed hosts are plain lowercase DNS names, so a match needs no other check.
        for allowed in tables.pointee.hosts where Self.isHost(host, named: allowed) { return }
        // Not listed: say precisely why, most specific reason first.
        if let percent = firstIndex(of: "%", in: range) {
            // Decode only to say precisely what is hidden there; an encoded host is refused anyway.
            let end = try PercentCoding.decode(input, range, into: decoded, at: 0, what: "the host")
            try PercentCoding.checkDecoded(UnsafeBufferPointer(rebasing: decoded[0..<end]), what: "the host")
            throw reject(.hostNotAllowed, "the host \(quoted(host)) is percent-encoded (byte offset \(percent)); hosts must be written plainly")
        }
        for c in host where c >= 0x80 {
            throw reject(.hostNotAllowed, "the host \(quoted(host)) has non-ASCII characters (look-alike letters are not allowed; allowed hosts: \(table.hostList))")
        }
        for c in host where !(ASCII.isAlpha(c) || ASCII.isDigit(c) || c == 0x2D || c == 0x2E) {
            throw reject(.hostNotAllowed, "the host \(quoted(host)) has a character a host name cannot have")
        }
        if host.last == UInt8(ascii: ".") {
            throw reject(.hostNotAllowed, "the host \(quoted(host)) ends with a dot")
        }
        if HostName.endsInANumber(host) {
            throw reject(.hostNotAllowed, "the host \(quoted(host)) is an IP address; only listed host names are allowed")
        }
        let punycode = Self.hasPunycodeLabel(host)
        throw reject(.hostNotAllowed, "the host \(quoted(host)) is not listed\(punycode ? " (punycode hosts must be listed as such)" : "") (allowed: \(table.hostList))")
    }

    /// Whether `host` is the listed host `name` (a lowercase DNS name: a-z, 0-9, `-`, `.`)
    /// in any case, eight bytes at a time. Setting bit 5 lowercases a letter and maps only
    /// control characters onto a digit, `-` or `.`; the prescan has refused those, so the
    /// test is exact.
    @inline(__always)
    static func isHost(_ host: UnsafeBufferPointer<UInt8>, named name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard host.count == name.count else { return false }
        guard let h = host.baseAddress, let n = name.baseAddress else { return true }  // both empty
        let bit5: UInt64 = 0x2020_2020_2020_2020
        var i = 0
        while i &+ 8 <= host.count {
            let a = UnsafeRawPointer(h + i).loadUnaligned(as: UInt64.self), b = UnsafeRawPointer(n + i).loadUnaligned(as: UInt64.self)
            if a | bit5 != b { return false }
            i &+= 8
        }
        while i < host.count {
            if h[i] | 0x20 != n[i] { return false }
            i &+= 1
        }
        return true
    }

    /// Whether a label of the (ASCII) host starts with the IDNA prefix `xn--`, in any case.
    static func hasPunycodeLabel(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        var labelStart = 0
        while labelStart + 4 <= host.count {
            if ASCII.lowercased(host[labelStart]) == UInt8(ascii: "x"), ASCII.lowercased(host[labelStart + 1]) == UInt8(ascii: "n"),
               host[labelStart + 2] == UInt8(ascii: "-"), host[labelStart + 3] == UInt8(ascii: "-") {
                return true
            }
            guard let dot = host[labelStart...].firstIndex(of: UInt8(ascii: ".")) else { return false }
            labelStart = dot + 1
        }
        return false
    }
}
