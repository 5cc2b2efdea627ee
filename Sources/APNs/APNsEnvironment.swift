/// Where notifications go. Apple documents both hosts on port 443 (2197 also works), and
/// separate hosts for managing broadcast channels.
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox

    public var baseURL: String {
        switch self {
        case .production: return "https://api.push.apple.com"
        case .sandbox: return "https://api.sandbox.push.apple.com"
        }
    }

    /// Apple's broadcast channel management API: its own hosts and ports (2195 sandbox,
    /// 2196 production), not the push host's.
    public var manageBaseURL: String {
        switch self {
        case .production: return "https://api-manage-broadcast.push.apple.com:2196"
        case .sandbox: return "https://api-manage-broadcast.sandbox.push.apple.com:2195"
        }
    }
}
