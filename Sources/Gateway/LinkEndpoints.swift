import DeepLinks
import HTTPServer
import StrictJSON

/// `POST /v1/links/check`, `GET /v1/routes`, and the AASA generated from the table.
enum LinkEndpoints {
    /// A batch is bounded so one request cannot monopolise a worker.
    static let maxBatch = 1000

    static func register(in builder: inout APIRouterBuilder, table: RouteTable, metrics: Metrics) {
        builder.add("POST", "/v1/links/check", operation: "links.check") { request, _ in
            let json: JSON
            switch JSONBody.decode(request) {
            case .failure(let problem): return problem.response
            case .success(let parsed): json = parsed
            }
            switch parseLinks(json) {
            case .failure(let problem):
                return problem.response
            case .success(.single(let link)):
                return jsonResponse(LinkResultJSON.line(check(link, table: table, metrics: metrics)))
            case .success(.batch(let links)):
                var w = JSONWriter(capacity: 256 * links.count + 64)
                var accepted = 0
                w.object { w in
                    w.member("results", array: { w in
                        for link in links {
                            let result = check(link, table: table, metrics: metrics)
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

        // The table as configured, plus its fingerprint (what a generated router carries).
        var routesDocument = table.document
        if case .object(var members) = routesDocument {
            members.members.append(JSONMember(key: "fingerprint", value: .string(table.fingerprint)))
            routesDocument = .object(members)
        }
        let routesBody = Array(JSONWriter.pretty(routesDocument).utf8)
        builder.add("GET", "/v1/routes", operation: "routes") { _, _ in jsonResponse(routesBody) }

        // Served as Apple fetches it: JSON, at this exact path, never a redirect.
        let aasaBody = Array(JSONWriter.pretty(AASAGenerator.applinks(for: table)).utf8)
        builder.add("GET", "/.well-known/apple-app-site-association", operation: "aasa", public: true) { _, _ in
            jsonResponse(aasaBody)
        }
    }

    private static func check(_ link: String, table: RouteTable, metrics: Metrics) -> LinkCheckResult {
        let result = table.check(link)
        if case .rejected(let rejection) = result { metrics.recordLinkRejected(code: rejection.code.rawValue) }
        return result
    }

    enum Links {
        case single(String)
        case batch([String])
    }

    /// `{"link": "…"}` or `{"links": ["…", …]}`; every problem at once.
    static func parseLinks(_ json: JSON) -> Result<Links, Problem> {
        guard let object = json.objectValue else {
            return .failure(.validation([Diagnostic(.wrongType, at: .pointer(.root), "expected an object with \"link\" or \"links\", found \(json.kindDescription)")]))
        }
        var errors: [Diagnostic] = []
        for key in object.keys where key != "link" && key != "links" {
            errors.append(Diagnostic(.unknownKey, at: .pointer(.root.appending(key)), Diagnostic.unknownKeyMessage(key, expected: ["link", "links"])))
        }
        switch (object["link"], object["links"]) {
        case (.some(let single), nil):
            guard let link = single.stringValue else {
                errors.append(Diagnostic(.wrongType, at: .pointer(.root.appending("link")), "expected a string, found \(single.kindDescription)"))
                return .failure(.validation(errors))
            }
            return errors.isEmpty ? .success(.single(link)) : .failure(.validation(errors))
        case (nil, .some(let many)):
            guard let items = many.arrayValue else {
                errors.append(Diagnostic(.wrongType, at: .pointer(.root.appending("links")), "expected an array of strings, found \(many.kindDescription)"))
                return .failure(.validation(errors))
            }
            if items.isEmpty || items.count > maxBatch {
                errors.append(Diagnostic(.invalidBatchSize, at: .pointer(.root.appending("links")), "expected 1 to \(maxBatch) links, got \(items.count)"))
                // Items past the limit are not looked at: half a million non-strings
                // would otherwise each get an error in the answer.
                return .failure(.validation(errors))
            }
            var links: [String] = []
            for (i, item) in items.enumerated() {
                if let text = item.stringValue { links.append(text) } else {
                    errors.append(Diagnostic(.wrongType, at: .pointer(.root.appending("links").appending(index: i)), "expected a string, found \(item.kindDescription)"))
                }
            }
            return errors.isEmpty ? .success(.batch(links)) : .failure(.validation(errors))
        case (.some, .some):
            errors.append(Diagnostic(.conflictingFields, at: .pointer(.root.appending("links")), "give either \"link\" or \"links\", not both"))
            return .failure(.validation(errors))
        case (nil, nil):
            errors.append(Diagnostic(.missing, at: .pointer(.root.appending("link")), "expected \"link\" (a string) or \"links\" (an array)"))
            return .failure(.validation(errors))
        }
    }
}
