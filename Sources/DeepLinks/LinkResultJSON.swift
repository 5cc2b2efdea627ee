import StrictJSON

/// The JSON object `check-link` prints for one link (one line of JSON Lines):
/// `{"ok":true,"canonical":…,"route":…,"params":{…},"query":{…}}` or
/// `{"ok":false,"error":{"code":…,"message":…}}`. Strings go through StrictJSON's
/// escaper, so unsafe characters only ever appear as `\uXXXX`.
public enum LinkResultJSON {
    public static func write(_ result: LinkCheckResult, to w: inout JSONWriter) {
        w.object { w in
            switch result {
            case .accepted(let link):
                w.member("ok", true)
                w.member("canonical", link.canonical)
                w.member("route", link.route)
                w.key("params")
                writeObject(link.params, to: &w)
                w.key("query")
                writeObject(link.query, to: &w)
            case .rejected(let rejection):
                w.member("ok", false)
                w.member("error", object: { w in
                    w.member("code", rejection.code.rawValue)
                    w.member("message", rejection.message)
                })
            }
        }
    }

    /// Checks `link` (one line's bytes) against `table` and writes its result object,
    /// straight from the canonicaliser's stack memory: the same bytes as checking and then
    /// calling `write(_:to:)`, without building the result's strings, the constant parts
    /// (route name, keys) copied from the table's `ResultJSONLayout`. True if accepted.
    public static func write(checking link: UnsafeBufferPointer<UInt8>, against table: RouteTable,
                             to w: inout JSONWriter) -> Bool {
        table.scan(link, accepted: { view in
            writeAccepted(view, layouts: table.resultPieces, to: &w)
            return true
        }, rejected: { rejection in
            writeRejected(rejection, to: &w)
            return false
        })
    }

    /// `write(.accepted(view.link))` without the strings, in one reserved stretch of the
    /// writer's buffer. The values are escaped with `escapeSafeText`: the canonicaliser
    /// refused every control and unsafe character in them.
    private static func writeAccepted(_ view: AcceptedLinkView, layouts: ResultJSONLayout.Pieces, to w: inout JSONWriter) {
        let json = layouts.route(view.routeIndex)
        // Each value is no longer than its canonical spelling, so 2 × the canonical form
        // bounds the escaped values (and 6 × bounds it escaped in full).
        let bound = 48 + json.constantBytes + 8 * view.canonical.count + 2 * view.values.count
        w.raw(maxBytes: bound) { start in
            var out = UncheckedBytes(start)
            out.copy(#"{"ok":true,"canonical":""#)
            if json.canonicalIsPlain {
                out.copy(view.canonical)
            } else {
                out.advance(JSONWriter.escape(view.canonical, into: out.next))
            }
            out.copy(layouts.routeAndParams(json))
            for i in 0..<view.parameterCount {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.copy(layouts.parameterKey(json, segment: view.parameterNameIndex(i)))
                out.advance(JSONWriter.escapeSafeText(view.parameterValue(i), into: out.next))
                out.byte(UInt8(ascii: "\""))
            }
            out.copy(#"},"query":{"#)
            for i in 0..<view.queryCount {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.copy(layouts.queryKey(json, slot: view.queryNameIndex(i)))
                out.advance(JSONWriter.escapeSafeText(view.queryValue(i), into: out.next))
                out.byte(UInt8(ascii: "\""))
            }
            out.copy("}}")
            return out.count
        }
        w.endedValue()
    }

    /// `write(.rejected(rejection))`, the constant parts copied rather than composed. The
    /// message is the canonicaliser's own: its input is quoted through `TextSafety`, which
    /// escapes every control and unsafe character, so `escapeSafeText` writes it.
    private static func writeRejected(_ rejection: LinkRejection, to w: inout JSONWriter) {
        rejection.text.bytes.withUnsafeBufferPointer { message in
            w.raw(maxBytes: 96 + 2 * message.count) { start in  // 96: the constant parts and the longest code
                var out = UncheckedBytes(start)
                out.copy(#"{"ok":false,"error":{"code":""#)
                var code = rejection.code.rawValue  // an identifier: nothing to escape
                code.withUTF8 { out.copy($0) }
                out.copy(#"","message":""#)
                out.advance(JSONWriter.escapeSafeText(message, into: out.next))
                out.copy("\"}}")
                return out.count
            }
        }
        w.endedValue()
    }

    /// The object and a newline.
    public static func line(_ result: LinkCheckResult) -> [UInt8] {
        var w = JSONWriter()
        write(result, to: &w)
        w.raw("\n")
        return w.bytes
    }

    /// Names are unique here (the canonicaliser rejects duplicate query keys), so an
    /// object keeps every value.
    private static func writeObject(_ values: [NamedValue], to w: inout JSONWriter) {
        w.object { w in
            for item in values {
                w.key(item.name)
                w.string(item.value)
            }
        }
    }
}

/// The constant parts of the accepted answers of a table's routes, escaped once when the
/// table is built: per route `","route":"NAME","params":{`, each parameter key as `"KEY":"`
/// and each query key likewise (the value, escaped, and its closing quote follow). They
/// live in memory of their own, never changed after init, so writing an answer reads them
/// through plain pointers (`Pieces`, which the route table keeps a copy of) and retains
/// nothing per line.
final class ResultJSONLayout: @unchecked Sendable {  // immutable after init
    struct Route {
        /// Its pieces, from this one: `routeAndParams`, a key per path segment (by segment
        /// index, `CompiledRoute.parameterNames`), then a key per query slot (`slotNames`).
        let firstPiece: Int
        let segmentCount: Int
        /// True when every byte of a canonical link of this route is printable ASCII other
        /// than `"` and `\`: the host, the literal segments and the query keys are (values
        /// are percent-encoded into that set), so the canonical form is copied unescaped.
        let canonicalIsPlain: Bool
        /// The bytes of all its pieces (a bound for one answer's constant parts).
        let constantBytes: Int
    }

    /// The memory this object owns, as plain pointers: valid while it lives.
    struct Pieces: @unchecked Sendable {  // immutable memory
        fileprivate let bytes: UnsafeMutableBufferPointer<UInt8>
        /// Piece k is `bytes[pieceStarts[k]..<pieceStarts[k + 1]]`.
        fileprivate let pieceStarts: UnsafeMutableBufferPointer<Int>
        fileprivate let routes: UnsafeMutableBufferPointer<Route>

        @inline(__always)
        func route(_ index: Int) -> Route { routes[index] }

        @inline(__always)
        func routeAndParams(_ route: Route) -> UnsafeBufferPointer<UInt8> { piece(route.firstPiece) }

        /// `"KEY":"` of the parameter at `segment` (its index in the pattern).
        @inline(__always)
        func parameterKey(_ route: Route, segment: Int) -> UnsafeBufferPointer<UInt8> { piece(route.firstPiece + 1 + segment) }

        /// `"KEY":"` of the query item in `slot`.
        @inline(__always)
        func queryKey(_ route: Route, slot: Int) -> UnsafeBufferPointer<UInt8> {
            piece(route.firstPiece + 1 + route.segmentCount + slot)
        }

        @inline(__always)
        private func piece(_ k: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[pieceStarts[k]..<pieceStarts[k + 1]])
        }
    }

    let pieces: Pieces

    init(_ compiled: [CompiledRoute], hosts: [String]) {
        var pool: [UInt8] = []
        var starts: [Int] = []
        var layouts: [Route] = []
        func add(_ piece: [UInt8]) {
            starts.append(pool.count)
            pool += piece
        }
        for route in compiled {
            let first = starts.count, poolStart = pool.count
            add(JSONWriter.bytes(capacity: 64) { w in
                w.raw(#"","route":"#)
                w.string(route.route.name)
                w.raw(#","params":{"#)
            })
            for name in route.parameterNames + route.slotNames { add(Self.keyPrefix(name)) }
            layouts.append(Route(firstPiece: first, segmentCount: route.parameterNames.count,
                                 canonicalIsPlain: Self.canonicalIsPlain(route, host: hosts.first ?? ""),
                                 constantBytes: pool.count - poolStart))
        }
        starts.append(pool.count)
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(pool.count, 1))
        _ = bytes.initialize(from: pool)
        let pieceStarts = UnsafeMutableBufferPointer<Int>.allocate(capacity: starts.count)
        _ = pieceStarts.initialize(from: starts)
        let routes = UnsafeMutableBufferPointer<Route>.allocate(capacity: max(layouts.count, 1))
        _ = routes.initialize(from: layouts)
        pieces = Pieces(bytes: bytes, pieceStarts: pieceStarts, routes: routes)
    }

    deinit {
        pieces.bytes.deallocate()
        pieces.pieceStarts.deallocate()
        pieces.routes.deallocate()
    }

    private static func keyPrefix(_ name: String) -> [UInt8] {
        JSONWriter.bytes(capacity: name.utf8.count + 8) { w in
            w.key(name)
            w.raw("\"")
        }
    }

    private static func canonicalIsPlain(_ route: CompiledRoute, host: String) -> Bool {
        func plain(_ text: some Sequence<UInt8>) -> Bool { text.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } }
        let literals = route.route.segments.allSatisfy { segment in
            if case .literal(let text) = segment { return plain(text.utf8) }
            return true
        }
        return plain(host.utf8) && literals && route.slotKeys.allSatisfy { plain($0) }
    }
}

/// Stores into memory already reserved (`JSONWriter.raw(maxBytes:)`), with no capacity
/// check per piece: the caller's bound covers them all.
private struct UncheckedBytes {
    let start: UnsafeMutablePointer<UInt8>
    private(set) var next: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) {
        self.start = start
        next = start
    }

    var count: Int { next - start }

    @inline(__always)
    mutating func advance(_ written: Int) { next += written }

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        next.pointee = b
        next += 1
    }

    @inline(__always)
    mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let from = bytes.baseAddress else { return }
        next.update(from: from, count: bytes.count)
        next += bytes.count
    }

    @inline(__always)
    mutating func copy(_ text: StaticString) { text.withUTF8Buffer { copy($0) } }
}
