import Crypto
import StrictJSON

extension RouteTable {
    /// SHA-256 (lowercase hex) of `fingerprintText`: what `pushgate routes fingerprint`
    /// prints, `GET /v1/routes` reports and a generated router carries as `tableFingerprint`.
    public var fingerprint: String { SHA256.hex(Array(fingerprintText.utf8)) }

    /// The table's meaning as one compact JSON text, the same for every spelling of the file
    /// (whitespace, member order, `"t"` or `{"type": "t"}`): `app`, `hosts`,
    /// `passthroughQuery`, then each route in file order with its parameters in pattern
    /// order and its query keys in declaration order. Its SHA-256 is the table's
    /// fingerprint (`pushgate routes fingerprint`), which generated routers carry.
    public var fingerprintText: String {
        func string(_ s: String) -> JSON { .string(s) }
        func type(_ t: ValueType) -> JSON {
            switch t {
            case .int: return string("int")
            case .uuid: return string("uuid")
            case .slug: return string("slug")
            case .string: return string("string")
            case .oneOf(let values): return .array(values.map(string))
            }
        }
        func object(_ members: [(String, JSON)]) -> JSON {
            .object(JSONObject(members.map { JSONMember(key: $0.0, value: $0.1) }))
        }
        let routes: [JSON] = routes.map { route in
            var params: [(String, JSON)] = []
            for case .parameter(let name, let t) in route.segments { params.append((name, type(t))) }
            let query = route.query.map { ($0.key, object([("type", type($0.type)), ("required", .bool($0.required))])) }
            return object([("name", string(route.name)), ("path", string(route.pattern)),
                           ("params", object(params)), ("query", object(query))])
        }
        let document = object([
            ("fingerprintVersion", .number("1")),
            // An app without a scheme leaves the member out, so existing fingerprints stay.
            ("app", object([("teamId", string(app.teamId)), ("bundleId", string(app.bundleId))]
                           + (app.scheme.map { [("scheme", string($0))] } ?? []))),
            ("hosts", .array(hosts.map(string))),
            ("passthroughQuery", .array(passthroughQuery.map(string))),
            ("routes", .array(routes)),
        ])
        return JSONWriter.serialize(document)
    }
}
