/// A route table in the form the canonicaliser reads: the trie, per-route layouts, and
/// names as bytes.
/// Immutable after init, hence Sendable.
final class CompiledRouteTable: Sendable {
    let scheme: String?
    /// Empty when the app has no scheme: a link's scheme is never empty, so it never matches.
    let schemeBytes: [UInt8]
    /// `example.com, www.example.com`, for messages.
    let hostList: String
    /// `https, shop` and `https:// or shop://` (or `https` and `https://` alone), for messages.
    let acceptedSchemes: String
    let expectedSchemes: String
    let hostBytes: [[UInt8]]
    let routes: [Route]
    let compiledRoutes: [CompiledRoute]
    let matcher: RouteMatcher

    init(app: AppIdentity, hosts: [String], passthroughQuery: [String], routes: [Route]) {
        self.scheme = app.scheme
        self.schemeBytes = Array((app.scheme ?? "").utf8)
        self.hostList = hosts.joined(separator: ", ")
        let schemes = ["https"] + (app.scheme.map { [$0] } ?? [])
        self.acceptedSchemes = schemes.joined(separator: ", ")
        self.expectedSchemes = schemes.map { $0 + "://" }.joined(separator: " or ")
        self.hostBytes = hosts.map { Array($0.utf8) }
        self.routes = routes
        self.compiledRoutes = routes.indices.map { CompiledRoute(route: routes[$0], index: $0, passthroughQuery: passthroughQuery) }
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
