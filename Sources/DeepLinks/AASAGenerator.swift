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

    public static func applinks(for table: RouteTable) -> JSON {
        applinks(for: [table])
    }

    /// One file for several apps on one host, as Apple allows: a `details` entry per
    /// table, in the order given (iOS asks each app's entry for the paths it opens).
    public static func applinks(for tables: [RouteTable]) -> JSON {
        .object(JSONObject([
            JSONMember(key: "applinks", value: .object(JSONObject([
                JSONMember(key: "details", value: .array(tables.map(detail(for:)))),
            ]))),
        ]))
    }

    /// `{"appIDs": [TEAM.bundle], "components": […]}` for one table.
    public static func detail(for table: RouteTable) -> JSON {
        let routes = table.routesMostSpecificFirst
        var components: [JSON] = []
        for route in emissionOrder(routes) {
            for guardPattern in guards(for: route, among: routes) {
                components.append(component([
                    ("/", .string(guardPattern)),
                    ("exclude", .bool(true)),
                    ("comment", .string("route \(route.name): \(route.pattern) (guard: each parameter is one segment)")),
                ]))
            }
            for pathPattern in openPatterns(for: route) {
                var members: [(String, JSON)] = [("/", .string(pathPattern))]
                if !route.requiredQuery.isEmpty {
                    let items = route.requiredQuery.map { JSONMember(key: $0.key, value: .string("?*")) }
                    members.append(("?", .object(JSONObject(items))))
                }
                members.append(("comment", .string("route \(route.name): \(route.pattern)")))
                components.append(component(members))
            }
        }
        return .object(JSONObject([
            JSONMember(key: "appIDs", value: .array([.string(table.app.appID)])),
            JSONMember(key: "components", value: .array(components)),
        ]))
    }

    private static func component(_ members: [(String, JSON)]) -> JSON {
        .object(JSONObject(members.map { JSONMember(key: $0.0, value: $0.1) }))
    }

    /// The routes (most specific first), with every route a guard could hide pulled in
    /// front of that guard.
    static func emissionOrder(_ sorted: [Route]) -> [Route] {
        var emitted = Array(repeating: false, count: sorted.count)
        var result: [Route] = []
        func emit(_ index: Int) {
            guard !emitted[index] else { return }
            emitted[index] = true
            let route = sorted[index]
            if !guards(for: route, among: sorted).isEmpty {
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
    private static func guardCouldHide(_ candidate: Route, guardedRoute route: Route) -> Bool {
        guard candidate.endsWithWildcard || candidate.segments.count > route.segments.count else { return false }
        for (c, r) in zip(candidate.segments, route.segments) {
            guard case .literal = r else { return true }
            if case .literal = c, c != r { return false }
        }
        return true
    }

    /// The `/` patterns that open the route's paths.
    static func openPatterns(for route: Route) -> [String] {
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
    static func guards(for route: Route, among routes: [Route]) -> [String] {
        guard !route.endsWithWildcard else { return [] }
        var result: [String] = []
        for (k, segment) in route.segments.enumerated() {
            guard case .parameter(_, let type) = segment else { continue }
            if case .oneOf = type { continue }  // exact values, which never contain '/'
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
    private static func overflowIsHandled(route: Route, position: Int, routes: [Route]) -> Bool {
        routes.contains { other in
            guard other.endsWithWildcard else { return false }
            let prefix = other.segments.dropLast()
            guard prefix.count <= position else { return false }
            return zip(prefix, route.segments).allSatisfy { p, s in
                if case .literal = p { return p == s }
                return false
            }
        }
    }
}
