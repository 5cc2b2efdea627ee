/// A route table in the form the canonicaliser reads: the trie and every name as bytes.
/// Immutable after init, hence Sendable.
final class CompiledRouteTable: Sendable {
    let scheme: String
    let schemeBytes: [UInt8]
    let hosts: [String]
    let hostBytes: [[UInt8]]
    let passthroughQuery: [String]
    let passthroughBytes: [[UInt8]]
    let routes: [Route]
    /// Per route, its declared query keys as bytes (declaration order).
    let routeQueryBytes: [[[UInt8]]]
    let matcher: RouteMatcher

    init(app: AppIdentity, hosts: [String], passthroughQuery: [String], routes: [Route]) {
        self.scheme = app.scheme
        self.schemeBytes = Array(app.scheme.utf8)
        self.hosts = hosts
        self.hostBytes = hosts.map { Array($0.utf8) }
        self.passthroughQuery = passthroughQuery
        self.passthroughBytes = passthroughQuery.map { Array($0.utf8) }
        self.routes = routes
        self.routeQueryBytes = routes.map { $0.query.map { Array($0.key.utf8) } }
        self.matcher = RouteMatcher(routes: routes)
    }

    /// The `parameters` of a matched route: path values by name, uuid lowercased, the
    /// rest of the path under `*`.
    func parameters(of route: Route, in path: DecodedSegments) -> [NamedValue] {
        var out: [NamedValue] = []
        for (i, segment) in route.segments.enumerated() {
            switch segment {
            case .literal: continue
            case .parameter(let name, let type):
                out.append(NamedValue(name: name, value: type.canonicalValue(path.string(i))))
            case .wildcard:
                out.append(NamedValue(name: Route.wildcardParameterName, value: path.rest(from: i)))
            }
        }
        return out
    }
}
