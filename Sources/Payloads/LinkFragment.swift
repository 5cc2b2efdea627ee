import DeepLinks
import StrictJSON

/// The top-level `"deeplink"` and `"route"` members for an accepted link:
/// `,"deeplink":"https://…","route":{"name":"order","params":{"id":"…"}}` — the route's
/// query items follow as `"query":{…}` when there are any, so the app need not parse
/// the link again.
enum LinkFragment {
    static func bytes(for link: CanonicalLink) -> [UInt8] {
        var w = JSONWriter(capacity: link.canonical.utf8.count + 64)
        w.raw(",\"deeplink\":")
        w.string(link.canonical)
        w.raw(",\"route\":{\"name\":")
        w.string(link.route)
        w.raw(",\"params\":")
        w.value(object(link.params))
        if !link.query.isEmpty {
            w.raw(",\"query\":")
            w.value(object(link.query))
        }
        w.byte(UInt8(ascii: "}"))
        return w.bytes
    }

    static func object(_ values: [NamedValue]) -> JSON {
        .object(JSONObject(values.map { JSONMember(key: $0.name, value: .string($0.value)) }))
    }
}
