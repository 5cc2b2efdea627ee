/// A route table in the form the canonicaliser reads: the trie, per-route layouts, and
/// names as bytes.
/// Immutable after init, hence Sendable.
final class CompiledRouteTable: @unchecked Sendable {  // immutable after init
    let scheme: String?
    /// `example.com, www.example.com`, for messages.
    let hostList: String
    /// `https, shop` and `https:// or shop://` (or `https` and `https://` alone), for messages.
    let acceptedSchemes: String
    let expectedSchemes: String
    let hostBytes: [[UInt8]]
    let routes: [Route]
    let compiledRoutes: [CompiledRoute]
    let matcher: RouteMatcher
    /// All of the above that a check reads for every link, as plain pointers (behind one
    /// pointer, so the scanner that carries it stays small).
    let tables: UnsafePointer<ScanTables>
    private let memory: FrozenMemory

    /// What the canonicaliser reads for every link: plain values and pointers into memory
    /// the table (and its routes and matcher) own, so a check retains nothing. Valid while
    /// the table lives.
    struct ScanTables: @unchecked Sendable {  // immutable memory
        let schemeBytes: UnsafeBufferPointer<UInt8>
        /// The listed hosts; the first is canonical.
        let hosts: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>
        /// By route index.
        let routes: UnsafeBufferPointer<CompiledRoute.Layout>
        let trie: RouteMatcher.Trie
        /// The engine's constant tables (copies of the static ones, read without the
        /// once-only initialisation check a static costs on every access).
        let beforeQuery: UnsafeBufferPointer<UInt8>
        let afterQuery: UnsafeBufferPointer<UInt8>
        let pathSafe: UnsafeBufferPointer<Bool>
        let querySafe: UnsafeBufferPointer<Bool>
        let credentialKeys: UnsafeBufferPointer<UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>>
    }

    init(app: AppIdentity, hosts: [String], passthroughQuery: [String], routes: [Route]) {
        self.scheme = app.scheme
        // Empty when the app has no scheme: a link's scheme is never empty, so it never matches.
        let schemeBytes = Array((app.scheme ?? "").utf8)
        self.hostList = hosts.joined(separator: ", ")
        let schemes = ["https"] + (app.scheme.map { [$0] } ?? [])
        self.acceptedSchemes = schemes.joined(separator: ", ")
        self.expectedSchemes = schemes.map { $0 + "://" }.joined(separator: " or ")
        let hostBytes = hosts.map { Array($0.utf8) }
        self.hostBytes = hostBytes
        self.routes = routes
        let compiledRoutes = routes.indices.map { CompiledRoute(route: routes[$0], index: $0, passthroughQuery: passthroughQuery) }
        self.compiledRoutes = compiledRoutes
        let matcher = RouteMatcher(routes: routes)
        self.matcher = matcher
        let memory = FrozenMemory()
        self.memory = memory
        let tables = ScanTables(schemeBytes: memory.copy(schemeBytes), hosts: memory.copy(hostBytes.map { memory.copy($0) }),
                                routes: memory.copy(compiledRoutes.map(\.layout)), trie: matcher.trie,
                                beforeQuery: memory.copy(LinkScanner.ByteClass.beforeQuery),
                                afterQuery: memory.copy(LinkScanner.ByteClass.afterQuery),
                                pathSafe: memory.copy(PercentCoding.pathSafe), querySafe: memory.copy(PercentCoding.querySafe),
                                credentialKeys: CredentialKeys.frozen(in: memory))
        self.tables = memory.copy([tables]).baseAddress!
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
