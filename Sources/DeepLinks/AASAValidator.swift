import StrictJSON

/// One inconsistency between an AASA file and the route table.
public struct AASAFinding: Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        /// No `details` entry names the table's app (`TEAMID.bundleId`).
        case appNotListed
        /// An app ID that is not the table's app.
        case foreignAppID
        /// A route whose links no rule opens.
        case routeNotOpened
        /// A route whose links an `exclude` rule sends to the browser.
        case routeExcluded
        /// A rule that opens the app for a path no route handles.
        case unroutedPattern
        /// Something Apple ignores (unknown key, `paths` beside `components`).
        case ignoredKey
        /// Over the 128 KB Apple downloads: the app opens nothing from this file.
        case fileTooLarge
    }

    /// The most Apple reads of an AASA file.
    public static let maxAppleFileBytes = 128 * 1024

    public var code: Code
    public var message: String
    /// Where in the AASA file, if the finding is about one place.
    public var location: JSONPath?
    /// The route concerned, if any.
    public var route: String?
    /// The concrete URL text (path, `?query`, `#fragment`) that shows the problem, if any;
    /// raw here, quoted and escaped in `message`.
    public var example: String?

    public init(code: Code, message: String, location: JSONPath? = nil, route: String? = nil, example: String? = nil) {
        self.code = code
        self.message = message
        self.location = location
        self.route = route
        self.example = example
    }
}

/// Checks an AASA against the route table with Apple's matching:
/// every route must be opened (probed with concrete sample links), and every rule that
/// opens the app must open only paths some route handles (probed with sample paths made
/// from the rule's own pattern: `*` as "", "x" and "x/y", `?` as "x").
///
/// "Handles" means the path's shape fits a route (literals, one non-empty segment per
/// parameter, one or more for `*`, list values exact). Value types such as `int` cannot be
/// written in an AASA pattern, so `/product/x` counts as handled by `/product/:id`: the
/// app opens and its router answers, which is what a universal link can promise.
public struct AASAValidator: Sendable {
    public let appID: String
    public let routes: [Route]

    public init(table: RouteTable) {
        self.appID = table.app.appID
        self.routes = table.routes
    }

    /// At most this many sample URLs per rule or route.
    static let maxSamples = 64

    public func validate(_ document: AASADocument) -> [AASAFinding] {
        var findings: [AASAFinding] = document.ignored.map {
            AASAFinding(code: .ignoredKey, message: "Apple ignores this: \($0.message)", location: $0.location)
        }
        findings += appIDFindings(document)
        guard document.lists(appID: appID) else { return findings }
        findings += routeFindings(document)
        findings += ruleFindings(document)
        return findings
    }

    private func appIDFindings(_ document: AASADocument) -> [AASAFinding] {
        var findings: [AASAFinding] = []
        for detail in document.details {
            for (i, id) in detail.appIDs.enumerated() where id != appID {
                findings.append(AASAFinding(
                    code: .foreignAppID,
                    message: "app ID \(JSONWriter.quoted(id)) is not the route table's app \(JSONWriter.quoted(appID))",
                    location: detail.location.appending("appIDs").appending(index: i)))
            }
        }
        if !document.lists(appID: appID) {
            findings.append(AASAFinding(code: .appNotListed,
                                        message: "no details entry names \(JSONWriter.quoted(appID)): the app opens no links",
                                        location: JSONPath.root.appending("applinks").appending("details")))
        }
        return findings
    }

    /// (a) Routes the file does not open.
    private func routeFindings(_ document: AASADocument) -> [AASAFinding] {
        var findings: [AASAFinding] = []
        for route in routes {
            for url in sampleURLs(for: route) {
                switch document.decision(for: url, appID: appID) {
                case .opens: continue
                case .notMatched:
                    findings.append(AASAFinding(code: .routeNotOpened,
                                                message: "route \(route.name) (\(route.pattern)): no rule opens \(display(url))",
                                                route: route.name, example: text(of: url)))
                case .excluded(let rule):
                    findings.append(AASAFinding(code: .routeExcluded,
                                                message: "route \(route.name) (\(route.pattern)): \(display(url)) is excluded by \(rule.location)",
                                                location: rule.location, route: route.name, example: text(of: url)))
                }
                break  // one example per route is enough
            }
        }
        return findings
    }

    /// (b) Rules that open the app for paths no route handles.
    private func ruleFindings(_ document: AASADocument) -> [AASAFinding] {
        var findings: [AASAFinding] = []
        for detail in document.details where detail.appIDs.contains(appID) {
            for rule in detail.rules where !rule.exclude {
                for url in Self.sampleURLs(for: rule) {
                    // Only what this rule really opens: an earlier rule may decide first.
                    guard case .opens(let opener) = document.decision(for: url, appID: appID),
                          opener.location == rule.location,
                          !handles(Self.segments(of: url.path, decoding: rule.percentEncoded))
                    else { continue }
                    let what = rule.path.map { "\(JSONWriter.quoted($0.text))" } ?? "(any path)"
                    findings.append(AASAFinding(code: .unroutedPattern,
                                                message: "\(what) opens the app for \(display(url)), which no route handles",
                                                location: rule.location, example: text(of: url)))
                    break
                }
            }
        }
        return findings
    }

    func handles(_ segments: [String]) -> Bool {
        routes.contains { $0.fits(segments) }
    }

    private func text(of url: AASAURLParts) -> String {
        var text = url.path
        if let q = url.query { text += "?" + q }
        if let f = url.fragment { text += "#" + f }
        return text
    }

    private func display(_ url: AASAURLParts) -> String { JSONWriter.quoted(text(of: url)) }

    /// Concrete links for a route: every combination of segment samples (capped).
    func sampleURLs(for route: Route) -> [AASAURLParts] {
        var paths = [""]
        for segment in route.segments {
            let choices: [String]
            switch segment {
            case .literal(let text): choices = [text]
            case .parameter(_, let type): choices = type.samples
            case .wildcard: choices = ["x", "x/y"]
            }
            paths = Self.combine(paths, choices.map { "/" + AASAPercentEncoding.encode($0) })
        }
        let query = route.requiredQuery.isEmpty ? nil
            : route.requiredQuery.map { $0.key + "=" + AASAPercentEncoding.encode($0.type.samples.first ?? "x") }
                .joined(separator: "&")
        return paths.map { AASAURLParts(path: $0.isEmpty ? "/" : $0, query: query) }
    }

    /// Links made from a rule's own patterns.
    static func sampleURLs(for rule: AASARule) -> [AASAURLParts] {
        let paths = samples(from: rule.path ?? AASAPattern("*")).map { $0.hasPrefix("/") ? $0 : "/" + $0 }
        let queries: [String?]
        switch rule.query {
        case nil: queries = [nil]
        case .whole(let pattern): queries = samples(from: pattern).prefix(1).map { $0 }
        case .items(let items):
            queries = [items.map { $0.name + "=" + (samples(from: $0.pattern).first ?? "") }.joined(separator: "&")]
        }
        let fragment = rule.fragment.flatMap { samples(from: $0).first }
        var urls: [AASAURLParts] = []
        for path in paths.prefix(maxSamples) {
            for query in queries { urls.append(AASAURLParts(path: path, query: query, fragment: fragment)) }
        }
        return urls
    }

    /// For each plain pattern (variables expanded), every `*` as "", "x" or "x/y" and every
    /// `?` as "x" (capped).
    static func samples(from pattern: AASAPattern) -> [String] {
        var all: [String] = []
        for alternative in pattern.alternatives where all.count < maxSamples {
            var results = [""]
            for scalar in alternative.unicodeScalars {
                switch scalar {
                case "*": results = combine(results, ["", "x", "x/y"])
                case "?": results = results.map { $0 + "x" }
                default: results = results.map { $0 + String(scalar) }
                }
            }
            all += results.prefix(maxSamples - all.count)
        }
        return all
    }

    private static func combine(_ prefixes: [String], _ choices: [String]) -> [String] {
        var out: [String] = []
        for prefix in prefixes {
            for choice in choices where out.count < maxSamples { out.append(prefix + choice) }
        }
        return out
    }

    /// `/a/b%20c` → ["a", "b c"]; the root path has no segments.
    static func segments(of path: String, decoding: Bool) -> [String] {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        if rest.isEmpty { return [] }
        return rest.split(separator: "/", omittingEmptySubsequences: false).map {
            decoding ? AASAPercentEncoding.decode(String($0)) : String($0)
        }
    }
}

extension DiagnosticDomain {
    /// `aasa validate`: why a file cannot be read as an AASA, and what it disagrees on
    /// with the route table.
    public static let aasa = DiagnosticDomain("aasa", (AASAError.Code.allCases.map(\.rawValue) + AASAFinding.Code.allCases.map(\.rawValue))
        .map { DiagnosticCode(rawValue: $0) })
}
