import DeepLinks
import HTTPServer
import StrictJSON

/// `POST /v1/apps/{app}/links/check`, `GET /v1/apps/{app}/routes` (and the same without
/// `/apps/{app}` for the only app), and the AASA of each host generated from the tables.
enum LinkEndpoints {
    /// A batch is bounded so one request cannot monopolise a worker.
    static let maxBatch = 1000

    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, metrics: Metrics) {
        builder.addPerApp("POST", "/links/check", operation: "links.check", apps: apps) { request, _, app throws(Problem) in
            switch try parseLinks(try JSONBody.decode(request)) {
            case .single(let link):
                return jsonResponse(LinkResultJSON.line(check(link, app: app, metrics: metrics)))
            case .batch(let links):
                var w = JSONWriter(capacity: 256 * links.count + 64)
                var accepted = 0
                w.object { w in
                    w.member("results", array: { w in
                        for link in links {
                            let result = check(link, app: app, metrics: metrics)
                            if case .accepted = result { accepted += 1 }
                            LinkResultJSON.write(result, to: &w)
                        }
                    })
                    w.member("accepted", accepted)
                    w.member("rejected", links.count - accepted)
                }
                w.raw("\n")
                return jsonResponse(w.bytes)
            }
        }

        // Each table as configured, plus its fingerprint (what a generated router carries).
        var bodies: [String: [UInt8]] = [:]
        for app in apps.apps {
            var routesDocument = app.routes.document
            if case .object(var members) = routesDocument {
                members.members.append(JSONMember(key: "fingerprint", value: .string(app.routes.fingerprint)))
                routesDocument = .object(members)
            }
            bodies[app.name] = Array(JSONWriter.pretty(routesDocument).utf8)
        }
        let routesBodies = bodies
        builder.addPerApp("GET", "/routes", operation: "routes", apps: apps) { _, _, app in jsonResponse(routesBodies[app.name] ?? []) }

        // Served as Apple fetches it: JSON, at this exact path, never a redirect. One file
        // per host: every app whose table lists the host, one `details` entry each. Any
        // Host, also with no keys: it is the public file, chosen by the Host.
        let aasa = AASAByHost(apps.apps)
        builder.add("GET", "/.well-known/apple-app-site-association", operation: "aasa", public: true, anyHost: true) { request, parameters throws(Problem) in
            guard let (body, names) = aasa.document(forHost: request.header("host") ?? "") else {
                throw Problem(status: 404, code: .notFound, title: "Not Found",
                              detail: "no app lists the host \(JSONWriter.quoted(TextSafety.excerpt(request.header("host") ?? "", limit: 64))) in its route table")
            }
            parameters.notes.app = names
            return jsonResponse(body)
        }
    }

    private static func check(_ link: String, app: GatewayApp, metrics: Metrics) -> LinkCheckResult {
        let result = app.routes.check(link)
        if case .rejected(let rejection) = result { metrics.recordLinkRejected(app: app.name, code: rejection.code.rawValue) }
        return result
    }

    enum Links {
        case single(String)
        case batch([String])
    }

    /// `{"link": "…"}` or `{"links": ["…", …]}`; every problem at once.
    static func parseLinks(_ json: JSON) throws(Problem) -> Links {
        var r = ConfigReader(document: nil)
        let root = JSONPath.root
        guard case .object(let object) = json else {
            r.report(.wrongType, at: root, "expected an object with \"link\" or \"links\", found \(json.kindDescription)")
            throw .validation(r.diagnostics)
        }
        r.rejectUnknownKeys(object, at: root, keys: ["link", "links"])
        var links: Links?
        switch (object["link"], object["links"]) {
        case (.some(let single), nil):
            links = r.string(single, at: root.appending("link")).map(Links.single)
        case (nil, .some(let many)):
            let path = root.appending("links")
            guard case .array(let items) = many else {
                r.report(.wrongType, at: path, "expected an array of strings, found \(many.kindDescription)")
                break
            }
            guard !items.isEmpty && items.count <= maxBatch else {
                // Items past the limit are not looked at: half a million non-strings
                // would otherwise each get an error in the answer.
                r.report(.invalidBatchSize, at: path, "expected 1 to \(maxBatch) links, got \(items.count)")
                break
            }
            links = r.strings(many, at: path).map(Links.batch)
        case (.some, .some):
            r.report(.conflictingFields, at: root.appending("links"), "give either \"link\" or \"links\", not both")
        case (nil, nil):
            r.report(.missing, at: root.appending("link"), "expected \"link\" (a string) or \"links\" (an array)")
        }
        guard r.isValid, let links else { throw .validation(r.diagnostics) }
        return links
    }
}

/// The `apple-app-site-association` of every host the apps' tables list, built once:
/// the apps listing a host, in configuration order, one `details` entry each. With one app
/// configured, a request for a host its table does not list (a test, a proxy that rewrites
/// `Host`) still gets that app's file.
struct AASAByHost: Sendable {
    let byHost: [String: (body: [UInt8], apps: String)]
    let fallback: (body: [UInt8], apps: String)?

    init(_ apps: [GatewayApp]) {
        var byHost: [String: (body: [UInt8], apps: String)] = [:]
        for host in Set(apps.flatMap(\.routes.hosts)) {
            let listing = apps.filter { $0.routes.hosts.contains(host) }
            byHost[host] = Self.document(listing)
        }
        self.byHost = byHost
        fallback = apps.count == 1 ? Self.document(apps) : nil
    }

    static func document(_ apps: [GatewayApp]) -> (body: [UInt8], apps: String) {
        (Array(JSONWriter.pretty(AASAGenerator.applinks(for: apps.map(\.routes))).utf8), apps.map(\.name).joined(separator: ","))
    }

    func document(forHost host: String) -> (body: [UInt8], apps: String)? {
        AppDirectory.hostName(host).flatMap { byHost[$0] } ?? fallback
    }
}
