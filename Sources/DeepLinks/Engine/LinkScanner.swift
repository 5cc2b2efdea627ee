import StrictJSON

/// One pass of the canonicaliser over a link's UTF-8 bytes. Each stage either throws the
/// one rejection for the link or hands its result to the next; the stages run in the
/// documented order (docs/deeplinks.md, "Checks, in order").
struct LinkScanner {
    static let maxSegments = LinkLimits.maxPathSegments
    static let maxItems = LinkLimits.maxQueryItems
    /// Segment ends (33).
    static let segmentSlots = maxSegments + 1
    /// Four offsets per query item (65), as UInt16 (a link is at most 2048 bytes) so the
    /// buffer stays small enough for the stack.
    static let itemSlots = 4 * (maxItems + 1)

    /// The table, read only for messages (`tables` has what every link needs). Held
    /// unretained: the table runs the scan, so it outlives it, and passing it on (to the
    /// accepted view) then costs no reference counting.
    let owner: Unmanaged<CompiledRouteTable>
    var table: CompiledRouteTable { owner.takeUnretainedValue() }
    let tables: UnsafePointer<CompiledRouteTable.ScanTables>
    let input: UnsafeBufferPointer<UInt8>
    /// Percent-decoded path segments, then decoded query keys and values.
    let decoded: UnsafeMutableBufferPointer<UInt8>
    /// `segmentEnds[k]`: end of segment k in `decoded`.
    let segmentEnds: UnsafeMutableBufferPointer<Int>
    /// Per query item: key start, key end, (value start = key end, so this slot later holds
    /// the item's query slot), value end in `decoded`.
    let itemBounds: UnsafeMutableBufferPointer<UInt16>

    var segmentCount = 0
    var itemCount = 0
    var decodedCount = 0
    /// True once the prescan has passed every byte: the link is then valid UTF-8.
    var prescanned = false

    init(table: CompiledRouteTable, input: UnsafeBufferPointer<UInt8>, decoded: UnsafeMutableBufferPointer<UInt8>,
         segmentEnds: UnsafeMutableBufferPointer<Int>, itemBounds: UnsafeMutableBufferPointer<UInt16>) {
        self.owner = Unmanaged.passUnretained(table)
        self.tables = table.tables
        self.input = input
        self.decoded = decoded
        assert(input.count <= LinkLimits.maxBytes && LinkLimits.maxBytes <= Int(UInt16.max))
        self.segmentEnds = segmentEnds
        self.itemBounds = itemBounds
    }

    enum Scheme { case https, app }

    mutating func run<R>(_ consume: (AcceptedLinkView) -> R) throws(LinkRejection) -> R {
        guard !input.isEmpty else { throw reject(.malformed, "the link is empty") }
        let marks = try prescan()
        prescanned = true
        let (scheme, afterScheme) = try readScheme()
        guard afterScheme + 1 < input.count, input[afterScheme] == UInt8(ascii: "/"),
              input[afterScheme + 1] == UInt8(ascii: "/") else {
            throw reject(.malformed, "expected '//' after the scheme at byte offset \(afterScheme)")
        }
        let authorityStart = afterScheme + 2
        // One pass finds the authority's end and whether it holds an '@' or a ':' at all
        // (most do not, and then the authority check needs no search of its own).
        var authorityEnd = authorityStart
        var userInfoOrPort = false
        while authorityEnd < input.count {
            let c = input[authorityEnd]
            if c == UInt8(ascii: "/") || c == UInt8(ascii: "?") { break }
            if c == UInt8(ascii: "@") || c == UInt8(ascii: ":") { userInfoOrPort = true }
            authorityEnd &+= 1
        }
        try checkUnencodedASCII(marks, ipLiteralAllowedBefore: scheme == .https ? authorityEnd : 0)
        if let hash = marks.firstHash {
            throw reject(.fragmentNotAllowed, "the link has a fragment ('#' at byte offset \(hash)); fragments are not allowed")
        }
        try checkAuthority(authorityStart..<authorityEnd, scheme: scheme, mayHoldUserInfoOrPort: userInfoOrPort)
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
        return try matchAndBuild(consume)
    }

    // Helpers shared by the stages.

    func reject(_ code: LinkErrorCode, _ message: LinkMessage) -> LinkRejection {
        LinkRejection(code: code, message)
    }

    /// Inlined, so each search is a tight loop over one constant byte (the authority is
    /// searched for `@` and `:` on every link).
    @inline(__always)
    func firstIndex(of ascii: Unicode.Scalar, in range: Range<Int>) -> Int? {
        let c = UInt8(ascii: ascii)
        var i = range.lowerBound
        while i < range.upperBound {
            if input[i] == c { return i }
            i &+= 1
        }
        return nil
    }

    /// ASCII case-insensitive equality with `lower`, which is lowercase.
    @inline(__always)
    func equalsIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ lower: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == lower.count else { return false }
        for i in 0..<a.count where ASCII.lowercased(a[i]) != lower[i] { return false }
        return true
    }

    /// Input text quoted for a message, escaped so hostile characters never print raw.
    func quoted(_ range: Range<Int>) -> QuotedBytes {
        quoted(UnsafeBufferPointer(rebasing: input[range]))
    }

    func quoted(_ bytes: UnsafeBufferPointer<UInt8>) -> QuotedBytes {
        QuotedBytes(bytes: bytes)
    }
}
