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
    /// (route name, keys) copied from the route's `RouteResultJSON`. True if accepted.
    public static func write(checking link: UnsafeBufferPointer<UInt8>, against table: RouteTable,
                             to w: inout JSONWriter) -> Bool {
        table.scan(link, accepted: { view in
            let json = table.resultJSON[view.routeIndex]
            w.raw(#"{"ok":true,"canonical":""#)
            if json.canonicalIsPlain { w.raw(view.canonical) } else { w.escaped(utf8: view.canonical) }
            w.raw(json.routeAndParams)
            for i in 0..<view.parameterCount {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw(json.parameterKeys[view.parameterNameIndex(i)])
                w.escaped(utf8: view.parameterValue(i))
                w.byte(UInt8(ascii: "\""))
            }
            w.raw(#"},"query":{"#)
            for i in 0..<view.queryCount {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw(json.queryKeys[view.queryNameIndex(i)])
                w.escaped(utf8: view.queryValue(i))
                w.byte(UInt8(ascii: "\""))
            }
            w.raw("}}")
            w.endedValue()
            return true
        }, rejected: { rejection in
            write(.rejected(rejection), to: &w)
            return false
        })
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

/// The constant parts of one route's accepted answer, escaped once when the table is
/// built: `","route":"NAME","params":{`, each parameter key as `"KEY":"` and each query key
/// likewise (the value, escaped, and its closing quote follow).
struct RouteResultJSON: Sendable {
    let routeAndParams: [UInt8]
    /// By segment index (`CompiledRoute.parameterNames`).
    let parameterKeys: [[UInt8]]
    /// By query slot (`CompiledRoute.slotNames`).
    let queryKeys: [[UInt8]]
    /// True when every byte of a canonical link of this route is printable ASCII other
    /// than `"` and `\`: the host, the literal segments and the query keys are (values are
    /// percent-encoded into that set), so the canonical form is copied without escaping.
    let canonicalIsPlain: Bool

    init(_ route: CompiledRoute, hosts: [String]) {
        func keyPrefix(_ name: String) -> [UInt8] {
            var w = JSONWriter(capacity: name.utf8.count + 8)
            w.key(name)
            w.raw("\"")
            return w.bytes
        }
        var head = JSONWriter(capacity: 64)
        head.raw(#"","route":"#)
        head.string(route.route.name)
        head.raw(#","params":{"#)
        routeAndParams = head.bytes
        parameterKeys = route.parameterNames.map(keyPrefix)
        queryKeys = route.slotNames.map(keyPrefix)
        func plain(_ text: some Sequence<UInt8>) -> Bool { text.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } }
        let literals = route.route.segments.allSatisfy { segment in
            if case .literal(let text) = segment { return plain(text.utf8) }
            return true
        }
        canonicalIsPlain = plain((hosts.first ?? "").utf8) && literals && route.slotKeys.allSatisfy { plain($0) }
    }
}
