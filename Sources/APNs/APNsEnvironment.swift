/// Where notifications go. Apple documents both hosts on port 443 (2197 also works).
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox

    public var baseURL: String {
        switch self {
        case .production: return "https://api.push.apple.com"
        case .sandbox: return "https://api.sandbox.push.apple.com"
        }
    }
}
