import StrictJSON

/// The configured apps, found by name for a caller. An app the caller may not use is
/// answered exactly like one that does not exist (404, listing only the caller's apps),
/// so no key learns another tenant's app names.
public struct AppDirectory: Sendable {
    /// At least one, in configuration order.
    public let apps: [GatewayApp]

    public init(_ apps: [GatewayApp]) {
        self.apps = apps
    }

    /// The apps the caller may use.
    public func visible(to caller: Caller) -> [GatewayApp] {
        apps.filter { caller.mayUse(app: $0.name) }
    }

    /// The app named in a request's path.
    public func app(named name: String, for caller: Caller) throws(Problem) -> GatewayApp {
        if caller.mayUse(app: name), let app = apps.first(where: { $0.name == name }) { return app }
        throw .unknownApp(name, known: visible(to: caller).map(\.name))
    }

    /// The app of a request that names none (the paths without `/v1/apps/{app}`, a
    /// campaign without `"app"`): the only app the caller may use.
    public func onlyApp(for caller: Caller, path: String) throws(Problem) -> GatewayApp {
        let mine = visible(to: caller)
        if mine.count == 1 { return mine[0] }
        throw Problem(
            status: 404, code: .notFound, title: "Not Found",
            detail: "several apps are configured: name one (\(path.isEmpty ? "" : path + "; ")apps: \(Self.list(mine.map(\.name))))",
            errors: [Diagnostic(.unknownApp, at: .none, "name the app; the apps are \(Self.list(mine.map(\.name)))")])
    }

    /// The apps whose route tables list `host` (case-insensitive, port ignored).
    public func apps(forHost host: String) -> [GatewayApp] {
        guard let name = Self.hostName(host) else { return [] }
        return apps.filter { $0.routes.hosts.contains(name) }
    }

    /// The host of a `Host` header as route tables list hosts: lower case, without the
    /// port or a trailing dot. Nil for an IP literal (never a listed host).
    static func hostName(_ header: String) -> String? {
        var name = Substring(header)
        if name.hasPrefix("[") { return nil }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        while name.hasSuffix(".") { name = name.dropLast() }
        return name.isEmpty ? nil : name.lowercased()
    }

    static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.map { JSONWriter.quoted($0) }.joined(separator: ", ")
    }
}

extension Problem {
    /// 404 for an app that does not exist or that the caller may not use; the caller's own
    /// apps are listed.
    static func unknownApp(_ name: String, known: [String], at location: DiagnosticLocation = .parameter("app")) -> Problem {
        let message = "no app named \(JSONWriter.quoted(TextSafety.excerpt(name, limit: 64))); the apps are \(AppDirectory.list(known))"
        return Problem(status: 404, code: .notFound, title: "Not Found", detail: message,
                       errors: [Diagnostic(.unknownApp, at: location, message)])
    }
}

/// Which app a campaign is for: the one rule of the API (`POST /v1/campaigns`, previews,
/// Live Activities) and of `pushgate send`, which only say it in their own words.
public enum CampaignAppChoice: Equatable, Sendable {
    /// `candidates[index]`.
    case chosen(Int)
    /// The document names one app, the path or `--app` another.
    case disagree(named: String, given: String)
    /// No candidate has that name (`inDocument`: the document's `"app"`, else the one given).
    case unknown(String, inDocument: Bool)
    /// Several candidates and none named.
    case unnamed

    /// `named`: the document's `"app"` string; `given`: the path's app or `--app`;
    /// `documentHasApp`: the document has an `"app"` member that is not a string (the
    /// planner reports it, with any app's words).
    public static func of(named: String?, given: String?, candidates: [String], documentHasApp: Bool = false) -> CampaignAppChoice {
        if let named, let given, named != given { return .disagree(named: named, given: given) }
        guard let name = named ?? given else {
            return !candidates.isEmpty && (candidates.count == 1 || documentHasApp) ? .chosen(0) : .unnamed
        }
        if let index = candidates.firstIndex(of: name) { return .chosen(index) }
        return .unknown(name, inDocument: named != nil)
    }
}

extension AppDirectory {
    /// The app a campaign document names in `"app"`, or the caller's only app. An app that
    /// does not exist or is not the caller's is 404 (pointer `/app`); no `"app"` when the
    /// caller has several is 422 `missing`. A non-string `"app"` is left to the planner to
    /// report (any app's planner reads it the same way).
    public func campaignApp(_ json: JSON, for caller: Caller, inPath: GatewayApp? = nil) throws(Problem) -> GatewayApp {
        let pointer = DiagnosticLocation.pointer(JSONPath.root.appending("app"))
        let candidates = inPath.map { [$0] } ?? visible(to: caller)
        switch CampaignAppChoice.of(named: json.objectValue?["app"]?.stringValue, given: inPath?.name, candidates: candidates.map(\.name),
                                    documentHasApp: json.objectValue?["app"] != nil) {
        case .chosen(let index):
            return candidates[index]
        case .disagree(let named, let given):
            throw .validation([Diagnostic(.invalidValue, at: pointer,
                "the campaign is for app \(JSONWriter.quoted(TextSafety.excerpt(named, limit: 64))), the path for \(JSONWriter.quoted(given))")])
        case .unknown(let named, _):
            throw .unknownApp(named, known: candidates.map(\.name), at: pointer)
        case .unnamed:
            throw .validation([Diagnostic(.missing, at: pointer,
                "several apps are configured: name one in \"app\" (\(Self.list(candidates.map(\.name))))")])
        }
    }
}
