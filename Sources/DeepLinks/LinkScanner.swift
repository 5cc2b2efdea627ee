import StrictJSON

/// One pass of the canonicaliser over a link's UTF-8 bytes. Each stage either throws the
/// one rejection for the link or hands its result to the next; the stages run in the
/// documented order (docs/deeplinks.md, "Checks in order").
struct LinkScanner {
    static let maxSegments = LinkLimits.maxPathSegments
    static let maxItems = LinkLimits.maxQueryItems
    /// Segment ends (33), then four offsets per query item (65).
    static let offsetSlots = (maxSegments + 1) + 4 * (maxItems + 1)

    let table: CompiledRouteTable
    let input: UnsafeBufferPointer<UInt8>
    /// Percent-decoded path segments, then decoded query keys and values.
    let decoded: UnsafeMutableBufferPointer<UInt8>
    /// `segmentEnds[k]`: end of segment k in `decoded`.
    let segmentEnds: UnsafeMutableBufferPointer<Int>
    /// Per query item: key start, key end, value start, value end in `decoded`.
    let itemBounds: UnsafeMutableBufferPointer<Int>

    private var segmentCount = 0
    private var itemCount = 0
    private var decodedCount = 0

    init(table: CompiledRouteTable, input: UnsafeBufferPointer<UInt8>, decoded: UnsafeMutableBufferPointer<UInt8>,
         offsets: UnsafeMutableBufferPointer<Int>) {
        self.table = table
        self.input = input
        self.decoded = decoded
        self.segmentEnds = UnsafeMutableBufferPointer(rebasing: offsets[0..<(Self.maxSegments + 1)])
        self.itemBounds = UnsafeMutableBufferPointer(rebasing: offsets[(Self.maxSegments + 1)...])
    }

    private enum Scheme { case https, app }

    mutating func run() throws(LinkRejection) -> CanonicalLink {
        guard !input.isEmpty else { throw reject(.malformed, "the link is empty") }
        let marks = try prescan()
        let (scheme, afterScheme) = try readScheme()
        guard afterScheme + 1 < input.count, input[afterScheme] == UInt8(ascii: "/"),
              input[afterScheme + 1] == UInt8(ascii: "/") else {
            throw reject(.malformed, "expected '//' after the scheme at byte offset \(afterScheme)")
        }
        let authorityStart = afterScheme + 2
        var authorityEnd = authorityStart
        while authorityEnd < input.count, input[authorityEnd] != UInt8(ascii: "/"), input[authorityEnd] != UInt8(ascii: "?") {
            authorityEnd += 1
        }
        try checkUnencodedASCII(marks, ipLiteralAllowedBefore: scheme == .https ? authorityEnd : 0)
        if let hash = marks.firstHash {
            throw reject(.fragmentNotAllowed, "the link has a fragment ('#' at byte offset \(hash)); fragments are not allowed")
        }
        try checkAuthority(authorityStart..<authorityEnd, scheme: scheme)
        // The scheme cannot hold '?', so the first one starts the query.
        let queryMark = marks.firstQuestion ?? input.count
        // For the app's scheme the "host" is the first path segment: shop://product/42 is /product/42.
        var pathText = (scheme == .https ? authorityEnd : authorityStart)..<queryMark
        if scheme == .https, !pathText.isEmpty { pathText = (pathText.lowerBound + 1)..<pathText.upperBound }
        // Before the query, every '/' outside the path text is one of the two after the
        // scheme or (https) the one that starts the path.
        let outside = 2 + (scheme == .https && authorityEnd < queryMark ? 1 : 0)
        try readPath(pathText, separators: marks.slashes - outside)
        if queryMark < input.count { try readQuery((queryMark + 1)..<input.count, separators: marks.ampersands) }
        return try matchAndBuild()
    }

    // MARK: Stages before the path

    /// Where the characters later stages care about first appear.
    private struct Landmarks {
        /// `/` before the first `?`, and `&` after it.
        var slashes = 0
        var ampersands = 0
        var firstUnencoded: Int?
        var firstBracket: Int?
        var firstHash: Int?
        var firstQuestion: Int?
    }

    private enum ByteClass {
        static let plain: UInt8 = 0, forbidden: UInt8 = 1, unencoded: UInt8 = 2, bracket: UInt8 = 3
        static let hash: UInt8 = 4, question: UInt8 = 5, nonASCII: UInt8 = 6, slash: UInt8 = 7, ampersand: UInt8 = 8

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
            for c in 0x80...0xFF { t[c] = nonASCII }
            return t
        }()
    }

    /// One pass over the whole link: refuses whitespace, controls, bidi and format
    /// characters anywhere (raw), and notes where the other stages must look.
    private func prescan() throws(LinkRejection) -> Landmarks {
        var marks = Landmarks()
        try ByteClass.table.withUnsafeBufferPointer { classes throws(LinkRejection) in
            var i = 0
            while i < input.count {
                let c = input[i]
                switch classes[Int(c)] {
                case ByteClass.plain:
                    i += 1
                    continue
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
                default: if marks.firstQuestion == nil { marks.firstQuestion = i }
                }
                i += 1
            }
        }
        return marks
    }

    private func readScheme() throws(LinkRejection) -> (Scheme, Int) {
        var end = 0
        while end < input.count, input[end] != UInt8(ascii: ":") {
            let c = input[end]
            if c == UInt8(ascii: "/") || c == UInt8(ascii: "?") || c == UInt8(ascii: "#") { break }
            end += 1
        }
        guard end < input.count, input[end] == UInt8(ascii: ":"), end > 0 else {
            throw reject(.malformed, "the link has no scheme (expected https:// or \(table.scheme)://)")
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
        if equalsIgnoringCase(scheme, Self.https) { return (.https, end + 1) }
        if equalsIgnoringCase(scheme, table.schemeBytes) { return (.app, end + 1) }
        throw reject(.schemeNotAllowed,
                     "scheme \(quoted(scheme)) is not allowed (accepted: https, \(table.scheme))")
    }

    private static let https: [UInt8] = Array("https".utf8)

    /// ASCII that RFC 3986 never allows raw. WHATWG parsers "repair" some of these
    /// (`\` becomes `/`); the canonicaliser refuses instead. Brackets are left to the
    /// host check (as an IP literal) when they are in an https authority.
    private func checkUnencodedASCII(_ marks: Landmarks, ipLiteralAllowedBefore authorityEnd: Int) throws(LinkRejection) {
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
        let shown = TextSafety.escapedForDisplay(String(UnicodeScalar(input[first])))
        if input[first] == UInt8(ascii: "[") || input[first] == UInt8(ascii: "]") {
            throw reject(.malformed, "character '\(shown)' at byte offset \(first) is only allowed around an IP literal, and those are not accepted")
        }
        throw reject(.malformed, "character '\(shown)' at byte offset \(first) must be percent-encoded")
    }

    private func checkAuthority(_ range: Range<Int>, scheme: Scheme) throws(LinkRejection) {
        if let at = firstIndex(of: "@", in: range) {
            throw reject(.userInfoNotAllowed, "the link has user info (\(quoted(range.lowerBound..<at)) before '@'); credentials are not allowed in links")
        }
        if scheme == .https, range.lowerBound < range.upperBound, input[range.lowerBound] == UInt8(ascii: "[") {
            throw reject(.hostNotAllowed, "the host \(quoted(range)) is an IP literal; only listed host names are allowed")
        }
        if let colon = firstIndex(of: ":", in: range) {
            throw reject(.portNotAllowed, "the link has a port (\(quoted((colon + 1)..<range.upperBound)) after ':' at byte offset \(colon)); ports are not allowed")
        }
        if scheme == .https { try checkHost(range) }
    }

    private func checkHost(_ range: Range<Int>) throws(LinkRejection) {
        guard !range.isEmpty else { throw reject(.malformed, "the link has an empty host") }
        let host = UnsafeBufferPointer(rebasing: input[range])
        // Listed hosts are plain lowercase DNS names, so a match needs no other check.
        for allowed in table.hostBytes where equalsIgnoringCase(host, allowed) { return }
        // Not listed: say precisely why, most specific reason first.
        if let percent = firstIndex(of: "%", in: range) {
            // Decode only to say precisely what is hidden there; an encoded host is refused anyway.
            let end = try PercentCoding.decode(input, range, into: decoded, at: 0, what: "the host")
            try PercentCoding.checkDecoded(UnsafeBufferPointer(rebasing: decoded[0..<end]), what: "the host")
            throw reject(.hostNotAllowed, "the host \(quoted(host)) is percent-encoded (byte offset \(percent)); hosts must be written plainly")
        }
        for c in host where c >= 0x80 {
            throw reject(.hostNotAllowed, "the host \(quoted(host)) has non-ASCII characters (look-alike letters are not allowed; allowed hosts: \(table.hosts.joined(separator: ", ")))")
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
        let lowered = String(decoding: host, as: UTF8.self).lowercased()
        let punycode = lowered.hasPrefix("xn--") || lowered.contains(".xn--")
        throw reject(.hostNotAllowed, "the host \(quoted(host)) is not listed\(punycode ? " (punycode hosts must be listed as such)" : "") (allowed: \(table.hosts.joined(separator: ", ")))")
    }

    // MARK: Path

    /// `text` is the path after its leading `/`; empty means the root path.
    /// `separators` is the number of `/` in it (counted by the prescan).
    private mutating func readPath(_ text: Range<Int>, separators: Int) throws(LinkRejection) {
        if text.isEmpty { return }
        if separators + 1 > Self.maxSegments {
            throw reject(.tooManyPathSegments, "the path has \(separators + 1) segments; the limit is \(Self.maxSegments)")
        }
        var start = text.lowerBound
        while true {
            let index = segmentCount + 1
            let (end, decodedEnd) = try PercentCoding.decode(
                input, from: start, limit: text.upperBound, stop: UInt8(ascii: "/"), alsoStop: UInt8(ascii: "/"),
                into: decoded, at: decodedCount, what: "path segment \(index)")
            try acceptSegment(start..<end, decodedEnd: decodedEnd, isLast: end == text.upperBound)
            if end == text.upperBound { break }
            start = end + 1
        }
    }

    private mutating func acceptSegment(_ raw: Range<Int>, decodedEnd end: Int, isLast: Bool) throws(LinkRejection) {
        let index = segmentCount + 1
        if raw.isEmpty {
            if isLast { throw reject(.trailingSlash, "the path ends with '/'") }
            throw reject(.emptySegment, "path segment \(index) is empty ('//' at byte offset \(raw.lowerBound - 1))")
        }
        let start = decodedCount
        let value = UnsafeBufferPointer(rebasing: decoded[start..<end])
        if end - start != raw.count {  // something was percent-decoded: check what it became
            try PercentCoding.checkDecoded(value, what: "path segment \(index)")
            for c in value where c == UInt8(ascii: "/") || c == UInt8(ascii: "\\") {
                throw reject(.invalidParameter, "path segment \(index) \(quoted(raw)) decodes to text with '/' or '\\'; a segment cannot contain a path separator")
            }
        }
        if value.count <= 2, value.allSatisfy({ $0 == UInt8(ascii: ".") }) {
            throw reject(.dotSegment, "path segment \(index) \(quoted(raw)) is a dot segment")
        }
        segmentEnds[segmentCount] = end
        segmentCount += 1
        decodedCount = end
    }

    // MARK: Query

    /// `text` is everything after `?`; empty (a bare trailing `?`) means no query.
    /// `separators` is the number of `&` in it (counted by the prescan).
    private mutating func readQuery(_ text: Range<Int>, separators: Int) throws(LinkRejection) {
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
    private mutating func readQueryItem(from: Int, limit: Int) throws(LinkRejection) -> Int {
        let index = itemCount + 1
        let amp = UInt8(ascii: "&"), equals = UInt8(ascii: "=")
        let keyStart = decodedCount
        let (keyRawEnd, keyEnd) = try PercentCoding.decode(input, from: from, limit: limit, stop: amp, alsoStop: equals,
                                                           into: decoded, at: keyStart, what: "query item \(index)")
        if keyRawEnd == from {
            if keyRawEnd == limit || input[keyRawEnd] == amp {
                throw reject(.malformed, "query item \(index) is empty (at byte offset \(from))")
            }
            throw reject(.malformed, "query item \(index) has no key (at byte offset \(from))")
        }
        let key = UnsafeBufferPointer(rebasing: decoded[keyStart..<keyEnd])
        if keyEnd - keyStart != keyRawEnd - from { try PercentCoding.checkDecoded(key, what: "query key \(quoted(from..<keyRawEnd))") }
        var rawEnd = keyRawEnd
        var valueEnd = keyEnd
        if keyRawEnd < limit, input[keyRawEnd] == equals {
            let valueStart = keyRawEnd + 1
            (rawEnd, valueEnd) = try PercentCoding.decode(input, from: valueStart, limit: limit, stop: amp, alsoStop: amp,
                                                          into: decoded, at: keyEnd, what: "the value of query key \(quoted(key))")
            if valueEnd - keyEnd != rawEnd - valueStart {
                try PercentCoding.checkDecoded(UnsafeBufferPointer(rebasing: decoded[keyEnd..<valueEnd]),
                                               what: "the value of query key \(quoted(key))")
            }
        }
        if CredentialKeys.contains(key) {
            throw reject(.credentialInQuery, "query key \(quoted(key)) carries a credential; secrets do not belong in links")
        }
        itemBounds[4 * itemCount] = keyStart
        itemBounds[4 * itemCount + 1] = keyEnd
        itemBounds[4 * itemCount + 2] = keyEnd
        itemBounds[4 * itemCount + 3] = valueEnd
        itemCount += 1
        decodedCount = valueEnd
        return rawEnd
    }

    private func itemKey(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: decoded[itemBounds[4 * i]..<itemBounds[4 * i + 1]])
    }

    private func itemValue(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: decoded[itemBounds[4 * i + 2]..<itemBounds[4 * i + 3]])
    }

    // MARK: Route and canonical form

    private func matchAndBuild() throws(LinkRejection) -> CanonicalLink {
        let path = DecodedSegments(bytes: UnsafeBufferPointer(decoded), ends: UnsafeBufferPointer(segmentEnds),
                                   count: segmentCount)
        guard let routeIndex = table.matcher.match(path) else { throw explainNoMatch(path) }
        let route = table.routes[routeIndex]
        let declared = table.routeQueryBytes[routeIndex]

        // Every item must be declared by the route or passed through, with a valid value.
        for i in 0..<itemCount {
            let key = itemKey(i), value = itemValue(i)
            let type: ValueType
            if let q = declared.firstIndex(where: { Bytes.equal($0, key) }) {
                type = route.query[q].type
            } else if table.passthroughBytes.contains(where: { Bytes.equal($0, key) }) {
                type = .string
            } else {
                throw reject(.unknownQueryParameter, "query key \(quoted(key)) is not declared by route \(JSONWriter.quoted(route.name)) nor passed through")
            }
            guard type.accepts(safeBytes: value) else {
                throw reject(.invalidParameter, "query value \(quoted(value)) for \(quoted(key)) must be \(type.requirement)")
            }
        }
        for (q, parameter) in route.query.enumerated() where parameter.required {
            if itemIndex(for: declared[q]) == nil {
                throw reject(.invalidParameter, "route \(JSONWriter.quoted(route.name)) requires query key \(JSONWriter.quoted(parameter.key))")
            }
        }
        return try build(route: route, routeIndex: routeIndex, path: path)
    }

    private func itemIndex(for key: [UInt8]) -> Int? {
        for i in 0..<itemCount where Bytes.equal(key, itemKey(i)) { return i }
        return nil
    }

    /// If some route fits the path's shape but a parameter has the wrong type, say which.
    private func explainNoMatch(_ path: DecodedSegments) -> LinkRejection {
        if let near = table.matcher.match(path, ignoringTypes: true) {
            let route = table.routes[near]
            for (k, segment) in route.segments.enumerated() {
                guard case .parameter(let name, let type) = segment, !type.accepts(safeBytes: path.segment(k)) else { continue }
                return reject(.invalidParameter, "path segment \(k + 1) \(quoted(path.segment(k))) is not a valid :\(name) for route \(JSONWriter.quoted(route.name)) (\(route.pattern)): it must be \(type.requirement)")
            }
        }
        var shown = ""
        for k in 0..<path.count { shown += "/" + path.string(k) }
        return reject(.noMatchingRoute, "no route matches the path \(JSONWriter.quoted(shown.isEmpty ? "/" : shown))")
    }

    private func build(route: Route, routeIndex: Int, path: DecodedSegments) throws(LinkRejection) -> CanonicalLink {
        let host = table.hostBytes[0]
        // Worst case: every decoded byte becomes %XX, plus separators.
        let capacity = 8 + host.count + 3 * decodedCount + segmentCount + 2 * itemCount + 2
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer throws(LinkRejection) in
            var out = CanonicalWriter(buffer)
            out.append("https://")
            out.append(host)
            var params: [NamedValue] = []
            params.reserveCapacity(route.segments.count)
            PercentCoding.pathSafe.withUnsafeBufferPointer { safe in
                for (k, segment) in route.segments.enumerated() {
                    if case .wildcard = segment {
                        for rest in k..<path.count {
                            out.append(UInt8(ascii: "/"))
                            PercentCoding.encode(path.segment(rest), safe: safe, into: &out)
                        }
                        params.append(NamedValue(name: Route.wildcardParameterName, value: path.rest(from: k)))
                        break
                    }
                    out.append(UInt8(ascii: "/"))
                    let value = path.segment(k)
                    guard case .parameter(let name, let type) = segment else {
                        out.append(value)
                        continue
                    }
                    let start = out.count
                    PercentCoding.encode(value, safe: safe, lowercasing: type.isUUID, into: &out)
                    params.append(NamedValue(name: name, value: canonicalValue(value, type: type, written: out, from: start)))
                }
            }
            if route.segments.isEmpty { out.append(UInt8(ascii: "/")) }
            var query: [NamedValue] = []
            if itemCount > 0 { query.reserveCapacity(itemCount) }
            PercentCoding.querySafe.withUnsafeBufferPointer { safe in
                func emit(_ key: [UInt8], name: String, type: ValueType) {
                    guard let i = itemIndex(for: key) else { return }
                    out.append(query.isEmpty ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                    out.append(key)
                    out.append(UInt8(ascii: "="))
                    let start = out.count
                    PercentCoding.encode(itemValue(i), safe: safe, lowercasing: type.isUUID, into: &out)
                    query.append(NamedValue(name: name, value: canonicalValue(itemValue(i), type: type, written: out, from: start)))
                }
                for (q, key) in table.routeQueryBytes[routeIndex].enumerated() {
                    emit(key, name: route.query[q].key, type: route.query[q].type)
                }
                for (p, key) in table.passthroughBytes.enumerated() {
                    emit(key, name: table.passthroughQuery[p], type: .string)
                }
            }
            if out.count > LinkLimits.maxBytes {
                throw reject(.tooLong, "the canonical form would be \(out.count) bytes; the limit is \(LinkLimits.maxBytes)")
            }
            let canonical = String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<out.count]), as: UTF8.self)
            return CanonicalLink(canonical: canonical, route: route.name, params: params, query: query)
        }
    }

    /// A decoded value as the result reports it; a uuid is taken from the lowercase text
    /// just written (it never needs percent-encoding).
    private func canonicalValue(_ bytes: UnsafeBufferPointer<UInt8>, type: ValueType, written out: CanonicalWriter,
                                from start: Int) -> String {
        if type.isUUID {
            return String(decoding: UnsafeBufferPointer(rebasing: out.buffer[start..<out.count]), as: UTF8.self)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Helpers

    private func reject(_ code: LinkErrorCode, _ message: String) -> LinkRejection {
        LinkRejection(code: code, message: message)
    }

    private func firstIndex(of ascii: Unicode.Scalar, in range: Range<Int>) -> Int? {
        let c = UInt8(ascii: ascii)
        for i in range where input[i] == c { return i }
        return nil
    }

    private func equalsIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ lower: [UInt8]) -> Bool {
        guard a.count == lower.count else { return false }
        return lower.withUnsafeBufferPointer { b in
            for i in 0..<a.count where ASCII.lowercased(a[i]) != b[i] { return false }
            return true
        }
    }

    /// Input text quoted for a message, escaped so hostile characters never print raw.
    private func quoted(_ range: Range<Int>) -> String {
        quoted(UnsafeBufferPointer(rebasing: input[range]))
    }

    private func quoted(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        "\"" + TextSafety.escapedForDisplay(String(decoding: bytes, as: UTF8.self)) + "\""
    }
}
