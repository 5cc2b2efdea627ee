import StrictJSON

/// Builds the `applinks` section that opens exactly the paths the route table handles.
///
/// Apple's `*` and `?` cross `/`, so `/product/*` alone would also open `/product/1/2`.
/// Each parameter therefore becomes `?*` (one or more characters; a uuid becomes its exact
/// 36-character shape, a list of values one component per value) and is preceded by an
/// `exclude` guard that catches the parameter spanning several segments
/// (`/product/*/*`). Routes come most specific first (literal > parameter > wildcard, left
/// to right), except that a route whose paths a guard could hide is moved before that
/// guard: a guard only hides paths with more segments than its own route, so this always
/// terminates, and opening a handled path earlier never changes what is opened.
public enum AASAGenerator {
    /// At most this many components per route when lists of values multiply.
    static let maxExpansions = 256

    public static func applinks(appID: String, routes: [AASARouteShape]) -> JSON {
        var components: [JSON] = []
        for route in emissionOrder(routes) {
            for guardPattern in guards(for: route, among: routes) {
                components.append(component([
                    ("/", .string(guardPattern)),
                    ("exclude", .bool(true)),
                    ("comment", .string("route \(route.name): \(route.pattern) — a parameter spans one segment")),
                ]))
            }
            for pathPattern in openPatterns(for: route) {
                var members: [(String, JSON)] = [("/", .string(pathPattern))]
                if !route.requiredQuery.isEmpty {
                    let items = route.requiredQuery.map { JSONMember(key: $0.name, value: .string("?*")) }
                    members.append(("?", .object(JSONObject(items))))
                }
                members.append(("comment", .string("route \(route.name): \(route.pattern)")))
                components.append(component(members))
            }
        }
        let detail = JSON.object(JSONObject([
            JSONMember(key: "appIDs", value: .array([.string(appID)])),
            JSONMember(key: "components", value: .array(components)),
        ]))
        return .object(JSONObject([
            JSONMember(key: "applinks", value: .object(JSONObject([
                JSONMember(key: "details", value: .array([detail])),
            ]))),
        ]))
    }

    private static func component(_ members: [(String, JSON)]) -> JSON {
        .object(JSONObject(members.map { JSONMember(key: $0.0, value: $0.1) }))
    }

    /// Most specific first: segment by segment literal < parameter < wildcard; when one
    /// route's kinds are a prefix of the other's, the longer first; then file order.
    static func ordered(_ routes: [AASARouteShape]) -> [AASARouteShape] {
        func rank(_ s: AASARouteShape.Segment) -> Int {
            switch s {
            case .literal: return 0
            case .parameter: return 1
            case .wildcard: return 2
            }
        }
        return routes.enumerated().sorted { a, b in
            let x = a.element.segments.map(rank), y = b.element.segments.map(rank)
            for (l, r) in zip(x, y) where l != r { return l < r }
            if x.count != y.count { return x.count > y.count }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// `ordered`, with every route a guard could hide pulled in front of that guard.
    static func emissionOrder(_ routes: [AASARouteShape]) -> [AASARouteShape] {
        let sorted = ordered(routes)
        var emitted = Array(repeating: false, count: sorted.count)
        var result: [AASARouteShape] = []
        func emit(_ index: Int) {
            guard !emitted[index] else { return }
            emitted[index] = true
            let route = sorted[index]
            if !guards(for: route, among: routes).isEmpty {
                for (other, candidate) in sorted.enumerated() where !emitted[other]
                    && guardCouldHide(candidate, guardedRoute: route) {
                    emit(other)
                }
            }
            result.append(route)
        }
        for index in sorted.indices { emit(index) }
        return result
    }

    /// Conservative: the candidate is longer (or ends in `*`) and agrees with the guarded
    /// route's literals up to its first parameter, where a guard's `*` starts.
    private static func guardCouldHide(_ candidate: AASARouteShape, guardedRoute route: AASARouteShape) -> Bool {
        guard candidate.hasWildcard || candidate.segments.count > route.segments.count else { return false }
        for (c, r) in zip(candidate.segments, route.segments) {
            guard case .literal = r else { return true }
            if case .literal = c, c != r { return false }
        }
        return true
    }

    /// The `/` patterns that open the route's paths.
    static func openPatterns(for route: AASARouteShape) -> [String] {
        var patterns = [""]
        for segment in route.segments {
            let choices: [String]
            switch segment {
            case .literal(let text): choices = [AASAPercentEncoding.encode(text)]
            case .parameter(_, .oneOf(let values)): choices = values.map(AASAPercentEncoding.encode)
            case .parameter(_, .uuid): choices = ["????????-????-????-????-????????????"]
            case .parameter: choices = ["?*"]
            case .wildcard: choices = ["?*"]
            }
            var next: [String] = []
            for prefix in patterns {
                for choice in choices where next.count < maxExpansions { next.append(prefix + "/" + choice) }
            }
            patterns = next
        }
        return patterns.map { $0.isEmpty ? "/" : $0 }
    }

    /// One exclude per parameter position: the route's shape with that parameter spanning
    /// two or more segments. Left out for routes ending in `*` (a guard would hide their
    /// own deeper paths) and where a literal-prefix wildcard route handles the overflow.
    static func guards(for route: AASARouteShape, among routes: [AASARouteShape]) -> [String] {
        guard !route.hasWildcard else { return [] }
        var result: [String] = []
        for (k, segment) in route.segments.enumerated() {
            guard case .parameter(_, let kind) = segment else { continue }
            if case .oneOf(let values) = kind, !values.contains(where: { $0.contains("/") }) { continue }
            if overflowIsHandled(route: route, position: k, routes: routes) { continue }
            var pattern = ""
            for (i, s) in route.segments.enumerated() {
                switch s {
                case .literal(let text): pattern += "/" + AASAPercentEncoding.encode(text)
                case .parameter, .wildcard: pattern += i == k ? "/*/*" : "/*"
                }
            }
            result.append(pattern)
        }
        return result
    }

    /// True when a wildcard route whose prefix is all literals, and equal to the route's
    /// literal segments before `position`, handles every path the guard would hide.
    private static func overflowIsHandled(route: AASARouteShape, position: Int, routes: [AASARouteShape]) -> Bool {
        routes.contains { other in
            guard other.hasWildcard else { return false }
            let prefix = other.segments.dropLast()
            guard prefix.count <= position else { return false }
            return zip(prefix, route.segments).allSatisfy { p, s in
                if case .literal = p { return p == s }
                return false
            }
        }
    }
}
