import DeepLinks
import StrictJSON

/// The top-level `"deeplink"` and `"route"` members for an accepted link:
/// `,"deeplink":"https://…","route":{"name":"order","params":{"id":"…"}}` — the route's
/// query items follow as `"query":{…}` when there are any, so the app need not parse
/// the link again.
enum LinkFragment {
    static func bytes(for link: CanonicalLink) -> [UInt8] {
        JSONWriter.continuingMembers(capacity: link.canonical.utf8.count + 64) { w in
            w.member("deeplink", link.canonical)
            w.member("route", object: { w in
                w.member("name", link.route)
                w.member("params", object: { w in write(link.params, to: &w) })
                if !link.query.isEmpty {
                    w.member("query", object: { w in write(link.query, to: &w) })
                }
            })
        }
    }

    static func write(_ values: [NamedValue], to w: inout JSONWriter) {
        for value in values {
            w.key(value.name)
            w.string(value.value)
        }
    }
}
