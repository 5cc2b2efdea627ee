/// The route table compiled into a trie keyed by segments. Matching explores literal
/// children first, then parameters, then `*`, and among several parameter matches keeps
/// the most specific route — so the result never depends on the order of the file.
///
/// The trie is stored flat in frozen memory (edges as index ranges, literal text in one
/// byte pool, parameter types as `ValueCheck`s), so a match walks plain integers and
/// pointers and never retains or releases anything.
struct RouteMatcher: Sendable {
    fileprivate struct LiteralEdge {
        var offset: Int, length: Int, child: Int  // text is pool[offset..<offset+length]
    }

    fileprivate struct ParameterEdge {
        var type: Int, child: Int  // type indexes `types`
    }

    fileprivate struct Node {
        var literals: Range<Int>  // into literalEdges
        var parameters: Range<Int>  // into parameterEdges
        var wildcardRoute: Int  // -1 for none
        var terminalRoute: Int  // -1 for none
    }

    /// Owns the memory `trie` points into.
    private let memory: FrozenMemory
    /// The trie itself: plain pointers, copied freely (the canonicaliser keeps one).
    let trie: Trie

    /// The routes must be conflict-free (see `RouteConflicts`).
    init(routes: [Route]) {
        let tree = TrieBuilder(routes: routes)
        var nodes: [Node] = []
        var literalEdges: [LiteralEdge] = []
        var parameterEdges: [ParameterEdge] = []
        var pool: [UInt8] = []
        var types: [ValueType] = []
        // The builder numbers nodes in creation order; edges are laid out per node.
        for node in tree.nodes {
            let literalStart = literalEdges.count
            for (text, child) in node.literals {
                literalEdges.append(LiteralEdge(offset: pool.count, length: text.count, child: child))
                pool.append(contentsOf: text)
            }
            let parameterStart = parameterEdges.count
            for (type, child) in node.parameters {
                let index = types.firstIndex(of: type) ?? types.count
                if index == types.count { types.append(type) }
                parameterEdges.append(ParameterEdge(type: index, child: child))
            }
            nodes.append(Node(literals: literalStart..<literalEdges.count,
                              parameters: parameterStart..<parameterEdges.count,
                              wildcardRoute: node.wildcardRoute ?? -1, terminalRoute: node.terminalRoute ?? -1))
        }
        var ranks: [UInt8] = []
        var rankStarts: [Int] = []
        for route in routes {
            rankStarts.append(ranks.count)
            ranks += route.segments.map { UInt8($0.specificityRank) }
        }
        rankStarts.append(ranks.count)
        let memory = FrozenMemory()
        self.memory = memory
        trie = Trie(nodes: memory.copy(nodes), literals: memory.copy(literalEdges),
                    parameters: memory.copy(parameterEdges), pool: memory.copy(pool),
                    types: memory.copy(types.map { ValueCheck($0, in: memory) }),
                    ranks: memory.copy(ranks), rankStarts: memory.copy(rankStarts))
    }

    /// The index of the most specific route matching the segments. With
    /// `ignoringTypes`, any segment fits any parameter (used to explain a refusal).
    /// Segment values must be free of forbidden characters (the canonicaliser's guarantee).
    func match(_ path: DecodedSegments, ignoringTypes: Bool = false) -> Int? {
        withExtendedLifetime(memory) { trie.match(path, ignoringTypes: ignoringTypes) }
    }

    /// The flat trie, valid while its `RouteMatcher` lives.
    struct Trie: @unchecked Sendable {  // immutable memory
        fileprivate let nodes: UnsafeBufferPointer<Node>
        fileprivate let literals: UnsafeBufferPointer<LiteralEdge>
        fileprivate let parameters: UnsafeBufferPointer<ParameterEdge>
        fileprivate let pool: UnsafeBufferPointer<UInt8>
        fileprivate let types: UnsafeBufferPointer<ValueCheck>
        /// Per route, the specificity of each segment (2 literal, 1 parameter, 0 `*`):
        /// route r's are ranks[rankStarts[r]..<rankStarts[r + 1]].
        fileprivate let ranks: UnsafeBufferPointer<UInt8>
        fileprivate let rankStarts: UnsafeBufferPointer<Int>

        /// `RouteMatcher.match`, for a caller that keeps the matcher alive.
        func match(_ path: DecodedSegments, ignoringTypes: Bool = false) -> Int? {
            let found = match(node: 0, depth: 0, path: path, ignoringTypes: ignoringTypes)
            return found >= 0 ? found : nil
        }

        /// A route index, or -1.
        private func match(node index: Int, depth: Int, path: DecodedSegments, ignoringTypes: Bool) -> Int {
            let node = nodes[index]
            if depth == path.count { return node.terminalRoute }
            let segment = path.segment(depth)
            // A literal beats anything else at this position.
            for e in node.literals {
                let edge = literals[e]
                guard Bytes.equal(UnsafeBufferPointer(rebasing: pool[edge.offset..<(edge.offset + edge.length)]), segment)
                else { continue }
                let found = match(node: edge.child, depth: depth + 1, path: path, ignoringTypes: ignoringTypes)
                if found >= 0 { return found }
                break
            }
            var best = -1
            for e in node.parameters {
                let edge = parameters[e]
                guard ignoringTypes || types[edge.type].accepts(safeBytes: segment) else { continue }
                let found = match(node: edge.child, depth: depth + 1, path: path, ignoringTypes: ignoringTypes)
                if found < 0 { continue }
                if best >= 0, !isMoreSpecific(found, than: best, from: depth + 1) { continue }
                best = found
            }
            return best >= 0 ? best : node.wildcardRoute
        }

        private func ranks(of route: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: ranks[rankStarts[route]..<rankStarts[route + 1]])
        }

        /// Lexicographic comparison of specificity from `depth` on; for two routes that
        /// match the same path in a conflict-free table this is the dominance order.
        private func isMoreSpecific(_ a: Int, than b: Int, from depth: Int) -> Bool {
            let ra = ranks(of: a), rb = ranks(of: b)
            var i = depth
            while i < max(ra.count, rb.count) {
                let x = i < ra.count ? ra[i] : 0, y = i < rb.count ? rb[i] : 0
                if x != y { return x > y }
                i += 1
            }
            return false
        }
    }
}

/// The trie as it is built, one route at a time, before `RouteMatcher` lays it out flat.
private struct TrieBuilder {
    struct Node {
        var literals: [(text: [UInt8], child: Int)] = []
        var parameters: [(type: ValueType, child: Int)] = []
        var wildcardRoute: Int?
        var terminalRoute: Int?
    }

    private(set) var nodes: [Node] = [Node()]

    init(routes: [Route]) {
        for (index, route) in routes.enumerated() {
            var node = 0
            for segment in route.segments {
                switch segment {
                case .literal(let text):
                    let bytes = Array(text.utf8)
                    node = nodes[node].literals.first(where: { $0.text == bytes })?.child
                        ?? addChild(of: node) { $0.literals.append((bytes, $1)) }
                case .parameter(_, let type):
                    node = nodes[node].parameters.first(where: { $0.type == type })?.child
                        ?? addChild(of: node) { $0.parameters.append((type, $1)) }
                case .wildcard:
                    nodes[node].wildcardRoute = index
                }
            }
            if !route.endsWithWildcard { nodes[node].terminalRoute = index }
        }
    }

    /// Appends an empty node, lets `link` record it as an edge of `parent`, and returns its index.
    private mutating func addChild(of parent: Int, _ link: (inout Node, Int) -> Void) -> Int {
        nodes.append(Node())
        link(&nodes[parent], nodes.count - 1)
        return nodes.count - 1
    }
}
