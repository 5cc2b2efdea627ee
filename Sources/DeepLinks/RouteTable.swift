import StrictJSON
/// The app's route table: the one file the app's router, its AASA and the gateway are
/// all built from. Built once (load, validate, compile), then immutable and shareable.
public struct RouteTable: Sendable {
    public let app: AppIdentity
    /// Lowercase host names; the first is canonical, the others are aliases.
    public let hosts: [String]
    /// Query keys kept on every route (analytics tags), in canonical order.
    public let passthroughQuery: [String]
    /// In file order.
    public let routes: [Route]
    /// The table as written (for serving it back, e.g. `GET /v1/routes`).
    public let document: JSON

    /// The matcher and byte forms the canonicaliser works from, in one object so that a
    /// check retains one reference, not a dozen arrays.
    let compiled: CompiledRouteTable
    /// The constant parts of `check-link`'s JSON answer, per route (see `LinkResultJSON`).
    let resultJSON: ResultJSONLayout
    /// Its memory as plain pointers, read per answer without reference counting.
    let resultPieces: ResultJSONLayout.Pieces

    /// Parses, validates and compiles a table from its JSON text. Pure: the caller reads
    /// the file and passes its name as `source` for messages.
    public init(jsonBytes: [UInt8], source: String) throws(RouteTableError) {
        var loader = RouteTableLoader(source: source)
        let loaded = try loader.load(jsonBytes)
        self.app = loaded.app
        self.hosts = loaded.hosts
        self.passthroughQuery = loaded.passthroughQuery
        self.routes = loaded.routes
        self.document = loaded.document
        self.compiled = CompiledRouteTable(app: loaded.app, hosts: loaded.hosts,
                                           passthroughQuery: loaded.passthroughQuery, routes: loaded.routes)
        self.resultJSON = ResultJSONLayout(compiled.compiledRoutes, hosts: loaded.hosts)
        self.resultPieces = resultJSON.pieces
    }

    public init(json: String, source: String) throws(RouteTableError) {
        try self.init(jsonBytes: Array(json.utf8), source: source)
    }

    /// The canonical host (the first listed).
    public var canonicalHost: String { hosts[0] }

    /// The route a path of decoded segments goes to, with its parameters (uuid values
    /// lowercased; a `*` route's rest of the path under the name `*`). For example
    /// `["product", "42"]` → product, `[id: 42]`. `[]` is the root path `/`.
    public func route(forPathSegments segments: [String]) -> (Route, [NamedValue])? {
        // The matcher assumes what the canonicaliser guarantees: no forbidden characters.
        for segment in segments where segment.unicodeScalars.contains(where: ForbiddenCharacters.contains) {
            return nil
        }
        return DecodedSegments.with(segments) { path in
            guard let index = compiled.matcher.match(path) else { return nil }
            return (routes[index], compiled.parameters(of: routes[index], in: path))
        }
    }

    /// The routes ordered most specific first (the order in which an AASA's first-match
    /// rule must list them); ties keep file order.
    public var routesMostSpecificFirst: [Route] {
        routes.enumerated().sorted { a, b in
            let ra = a.element.segments.map(\.specificityRank), rb = b.element.segments.map(\.specificityRank)
            if ra != rb {
                for (x, y) in zip(ra, rb) where x != y { return x > y }
                // Same prefix: the longer route is the more specific one.
                return ra.count > rb.count
            }
            return a.offset < b.offset
        }.map(\.element)
    }
}
