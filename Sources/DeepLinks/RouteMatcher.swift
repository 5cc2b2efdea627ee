/// The route table compiled into a trie keyed by segments. Matching explores literal
/// children first, then parameters, then `*`, and among several parameter matches keeps
/// the most specific route — so the result never depends on the order of the file.
struct RouteMatcher: Sendable {
    private struct Node: Sendable {
        var literals: [(bytes: [UInt8], child: Int)] = []
        var parameters: [(type: ValueType, child: Int)] = []
        /// The route whose final `*` sits here.
        var wildcardRoute: Int?
        /// The route that ends exactly here.
        var terminalRoute: Int?
    }

    private var nodes: [Node] = [Node()]
    /// Per route, the specificity of each segment (2 literal, 1 parameter, 0 `*`).
    private var ranks: [[UInt8]] = []

    /// The routes must be conflict-free (see `RouteConflicts`).
    init(routes: [Route]) {
        for (index, route) in routes.enumerated() {
            ranks.append(route.segments.map { UInt8($0.specificityRank) })
            var node = 0
            for segment in route.segments {
                switch segment {
                case .literal(let text):
                    let bytes = Array(text.utf8)
                    if let existing = nodes[node].literals.first(where: { $0.bytes == bytes }) {
                        node = existing.child
                    } else {
                        nodes.append(Node())
                        nodes[node].literals.append((bytes, nodes.count - 1))
                        node = nodes.count - 1
                    }
                case .parameter(_, let type):
                    if let existing = nodes[node].parameters.first(where: { $0.type == type }) {
                        node = existing.child
                    } else {
                        nodes.append(Node())
                        nodes[node].parameters.append((type, nodes.count - 1))
                        node = nodes.count - 1
                    }
                case .wildcard:
                    nodes[node].wildcardRoute = index
                }
            }
            if !route.endsWithWildcard { nodes[node].terminalRoute = index }
        }
    }

    /// The index of the most specific route matching the segments. With
    /// `ignoringTypes`, any segment fits any parameter (used to explain a refusal).
    func match(_ path: DecodedSegments, ignoringTypes: Bool = false) -> Int? {
        nodes.withUnsafeBufferPointer { nodes in
            match(path, nodes: nodes, node: 0, depth: 0, ignoringTypes: ignoringTypes)
        }
    }

    private func match(_ path: DecodedSegments, nodes: UnsafeBufferPointer<Node>, node: Int, depth: Int,
                       ignoringTypes: Bool) -> Int? {
        if depth == path.count { return nodes[node].terminalRoute }
        let segment = path.segment(depth)
        // A literal beats anything else at this position.
        for literal in nodes[node].literals where Bytes.equal(literal.bytes, segment) {
            if let found = match(path, nodes: nodes, node: literal.child, depth: depth + 1, ignoringTypes: ignoringTypes) {
                return found
            }
            break
        }
        var best: Int?
        for parameter in nodes[node].parameters where ignoringTypes || parameter.type.accepts(safeBytes: segment) {
            guard let found = match(path, nodes: nodes, node: parameter.child, depth: depth + 1,
                                    ignoringTypes: ignoringTypes) else { continue }
            if let current = best, !isMoreSpecific(found, than: current, from: depth + 1) { continue }
            best = found
        }
        return best ?? nodes[node].wildcardRoute
    }

    /// Lexicographic comparison of specificity from `depth` on; for two routes that
    /// match the same path in a conflict-free table this is the dominance order.
    private func isMoreSpecific(_ a: Int, than b: Int, from depth: Int) -> Bool {
        let ra = ranks[a], rb = ranks[b]
        var i = depth
        while i < max(ra.count, rb.count) {
            let x = i < ra.count ? ra[i] : 0, y = i < rb.count ? rb[i] : 0
            if x != y { return x > y }
            i += 1
        }
        return false
    }
}
