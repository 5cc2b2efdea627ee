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
    /// calling `write(_:to:)`, without building the result's strings. True if accepted.
    public static func write(checking link: UnsafeBufferPointer<UInt8>, against table: RouteTable,
                             to w: inout JSONWriter) -> Bool {
        table.scan(link, accepted: { view in
            w.object { w in
                w.member("ok", true)
                w.key("canonical")
                w.string(utf8: view.canonical)
                w.member("route", view.routeName)
                w.member("params", object: { w in
                    for i in 0..<view.parameterCount {
                        w.key(view.parameterName(i))
                        w.string(utf8: view.parameterValue(i))
                    }
                })
                w.member("query", object: { w in
                    for i in 0..<view.queryCount {
                        w.key(view.queryName(i))
                        w.string(utf8: view.queryValue(i))
                    }
                })
            }
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
