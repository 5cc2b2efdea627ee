import DeepLinks
import StrictJSON

/// A template's link pattern whose placeholders some device may fill: checked per
/// device, except that devices which override none of its variables share one answer.
struct DeviceLink: Sendable {
    let pattern: LinkPattern
    let variableNames: [String]
    let campaignVariables: [NamedValue]
    let checker: any DeepLinkChecking
    /// The answer for devices that override none of `variableNames`.
    let shared: Result<(link: CanonicalLink, bytes: [UInt8]), PayloadError>

    init(pattern: LinkPattern, campaignVariables: [NamedValue], checker: any DeepLinkChecking) {
        self.pattern = pattern
        self.variableNames = pattern.text.variableNames
        self.campaignVariables = campaignVariables
        self.checker = checker
        shared = Self.resolve(pattern, checker: checker, at: .root.appending("variables")) { name in
            campaignVariables.value(named: name)
        }
    }

    func resolve(for device: Device, at path: JSONPath) -> Result<(link: CanonicalLink, bytes: [UInt8]), PayloadError> {
        if !device.variables.contains(where: { variableNames.contains($0.name) }) {
            if case .failure(let e) = shared, e.code == .missingVariable {
                return .failure(PayloadError(.missingVariable, at: path, e.message))
            }
            return shared
        }
        return Self.resolve(pattern, checker: checker, at: path) { name in
            device.variable(name) ?? campaignVariables.value(named: name)
        }
    }

    static func resolve(_ pattern: LinkPattern, checker: any DeepLinkChecking, at path: JSONPath,
                        _ value: (String) -> String?) -> Result<(link: CanonicalLink, bytes: [UInt8]), PayloadError> {
        switch pattern.render(value) {
        case .failure(let missing):
            return .failure(CampaignPlanner.missingVariable(missing.name, at: path))
        case .success(let link):
            switch checker.check(link) {
            case .accepted(let canonical):
                return .success((canonical, LinkFragment.bytes(for: canonical)))
            case .rejected(let rejection):
                return .failure(PayloadError(.deeplinkRejected, at: path,
                                             "the deep link \(TextSafety.quoted(link)) is rejected: \(rejection.message)",
                                             linkCode: rejection.code))
            }
        }
    }
}
