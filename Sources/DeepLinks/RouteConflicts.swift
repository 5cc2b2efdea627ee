/// The Go 1.22 `ServeMux` rule, with types: two routes conflict when some URL path
/// matches both and neither is strictly more specific. Specificity is compared
/// position by position (literal > parameter > `*`); one route is more specific when it
/// is at least as specific everywhere and more specific somewhere. Two parameters are
/// equally specific whatever their types, so `:id int` and `:name slug` conflict (both
/// match `42`) while `:id int` and `:id uuid` do not (no value is both).
enum RouteConflicts {
    struct Conflict {
        let first: Int
        let second: Int
        /// A path both routes match.
        let example: String
    }

    static func firstConflict(in routes: [Route]) -> Conflict? {
        for j in routes.indices {
            for i in 0..<j {
                if let example = conflictExample(routes[i], routes[j]) {
                    return Conflict(first: i, second: j, example: example)
                }
            }
        }
        return nil
    }

    /// A path both routes match if they conflict, else nil.
    static func conflictExample(_ a: Route, _ b: Route) -> String? {
        guard let (example, aWins, bWins) = overlap(a, b) else { return nil }
        if aWins != bWins { return nil }  // one is strictly more specific
        return example
    }

    /// A path both routes match, whichever is more specific, else nil. Within one table
    /// the more specific route takes it; across two apps' tables nothing decides.
    static func sharedPath(_ a: Route, _ b: Route) -> String? {
        overlap(a, b)?.example
    }

    private static func overlap(_ a: Route, _ b: Route) -> (example: String, aWins: Bool, bWins: Bool)? {
        guard let length = commonLength(a, b) else { return nil }
        var aWins = false, bWins = false
        var example = ""
        for i in 0..<length {
            let sa = segment(a, at: i), sb = segment(b, at: i)
            guard let witness = sharedValue(sa, sb) else { return nil }
            example += "/" + witness
            if sa.specificityRank > sb.specificityRank { aWins = true }
            if sb.specificityRank > sa.specificityRank { bWins = true }
        }
        return (example.isEmpty ? "/" : example, aWins, bWins)
    }

    /// The number of segments of a path both could match, or nil if their lengths exclude it.
    private static func commonLength(_ a: Route, _ b: Route) -> Int? {
        let na = a.segments.count, nb = b.segments.count
        switch (a.endsWithWildcard, b.endsWithWildcard) {
        case (false, false): return na == nb ? na : nil
        case (true, false): return nb >= na ? nb : nil
        case (false, true): return na >= nb ? na : nil
        case (true, true): return max(na, nb)
        }
    }

    /// The segment at `i`, where a final `*` covers every later position.
    private static func segment(_ route: Route, at i: Int) -> PathSegment {
        i < route.segments.count ? route.segments[i] : .wildcard
    }

    /// A decoded value both segments match, or nil if none exists.
    private static func sharedValue(_ a: PathSegment, _ b: PathSegment) -> String? {
        switch (a, b) {
        case (.wildcard, .wildcard): return "x"
        case (.wildcard, let other), (let other, .wildcard): return sampleValue(other)
        case (.literal(let x), .literal(let y)): return x == y ? x : nil
        case (.literal(let x), .parameter(_, let t)), (.parameter(_, let t), .literal(let x)):
            return t.accepts(x) ? x : nil
        case (.parameter(_, let t), .parameter(_, let u)): return sharedValue(t, u)
        }
    }

    private static func sampleValue(_ segment: PathSegment) -> String {
        switch segment {
        case .literal(let x): return x
        case .parameter(_, let t): return sampleValue(t)
        case .wildcard: return "x"
        }
    }

    static let sampleUUID = "00000000-0000-0000-0000-000000000000"

    static func sampleValue(_ type: ValueType) -> String {
        switch type {
        case .int: return "1"
        case .uuid: return sampleUUID
        case .slug, .string: return "a"
        case .oneOf(let values): return values[0]
        }
    }

    /// A value of both types, or nil if they are disjoint.
    static func sharedValue(_ t: ValueType, _ u: ValueType) -> String? {
        if case .oneOf(let values) = t { return values.first(where: { u.accepts($0) }) }
        if case .oneOf(let values) = u { return values.first(where: { t.accepts($0) }) }
        // The remaining named types overlap except int and uuid (a uuid always has dashes).
        for candidate in ["1", "a", sampleUUID] where t.accepts(candidate) && u.accepts(candidate) {
            return candidate
        }
        return nil
    }
}

extension RouteTable {
    /// One route of each table that can match the same path, and such a path.
    public struct Overlap: Sendable, Equatable {
        public let route: Route
        public let otherRoute: Route
        public let examplePath: String
    }

    /// Every pair of routes, one from this table and one from `other`, that some path
    /// matches (hosts are not compared: the caller knows which hosts the tables share).
    public func overlaps(with other: RouteTable) -> [Overlap] {
        var found: [Overlap] = []
        for a in routes {
            for b in other.routes {
                if let example = RouteConflicts.sharedPath(a, b) {
                    found.append(Overlap(route: a, otherRoute: b, examplePath: example))
                }
            }
        }
        return found
    }
}
