/// What Apple does with one URL for one app.
public enum AASADecision: Sendable, Equatable {
    /// A rule matched and opens the app.
    case opens(AASARule)
    /// An `exclude` (or `NOT `) rule matched first: the URL opens in the browser.
    case excluded(AASARule)
    /// No rule matched.
    case notMatched
}

extension AASADocument {
    /// Apple's evaluation: the entries naming `appID`, in file order, then their rules in
    /// order; the first rule that matches decides. Entries for other apps are skipped.
    public func decision(for url: AASAURLParts, appID: String) -> AASADecision {
        for detail in details where detail.appIDs.contains(appID) {
            for rule in detail.rules where rule.matches(url) {
                return rule.exclude ? .excluded(rule) : .opens(rule)
            }
        }
        return .notMatched
    }

    /// True when some entry names `appID`.
    public func lists(appID: String) -> Bool {
        details.contains { $0.appIDs.contains(appID) }
    }
}

extension AASARule {
    /// All of the rule's patterns match (an absent pattern is `*`). An absent query or
    /// fragment is tested as the empty string.
    public func matches(_ url: AASAURLParts) -> Bool {
        if let path, !test(path, url.path) { return false }
        if let fragment, !test(fragment, url.fragment ?? "") { return false }
        switch query {
        case nil: return true
        case .whole(let pattern): return test(pattern, url.query ?? "")
        case .items(let required):
            let items = AASAQueryItems.split(url.query)
            return required.allSatisfy { requirement in
                items.contains { item in
                    prepared(item.name) == requirement.name && test(requirement.pattern, item.value)
                }
            }
        }
    }

    private func test(_ pattern: AASAPattern, _ input: String) -> Bool {
        pattern.matches(prepared(input), caseSensitive: caseSensitive)
    }

    /// With `percentEncoded: false` the pattern is written decoded, so the URL's text is
    /// percent-decoded before comparing.
    private func prepared(_ input: String) -> String {
        percentEncoded ? input : AASAPercentEncoding.decode(input)
    }
}

/// Query splitting the way `URLComponents.queryItems` does it: on `&`, then at the first
/// `=`; a `+` stays a plus.
enum AASAQueryItems {
    static func split(_ query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            if let eq = item.firstIndex(of: "=") {
                return (String(item[..<eq]), String(item[item.index(after: eq)...]))
            }
            return (String(item), "")
        }
    }
}
