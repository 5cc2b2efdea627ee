import StrictJSON

/// The one rule for an app's bundle identifier, wherever one is written (the route table's
/// `app.bundleId`, the configuration's `topic` and `apns.topic`).
public enum BundleID {
    /// Apple's limit for a bundle identifier.
    public static let maxLength = 155

    /// Why `text` is not a reverse-DNS bundle id (`com.example.shop`: at least two
    /// dot-separated parts of A-Z a-z 0-9 -), or nil when it is one.
    public static func problem(with text: String) -> String? {
        if text.utf8.count > maxLength { return "a bundle id has at most \(maxLength) characters" }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let ok = parts.count >= 2 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { ASCII.isAlpha($0) || ASCII.isDigit($0) || $0 == 0x2D }
        }
        return ok ? nil : "\(JSONWriter.quoted(text)) is not a bundle id: reverse-DNS, e.g. com.example.app (A-Z a-z 0-9 - in dot-separated parts)"
    }
}

/// The one rule for Apple's team and key identifiers, wherever one is written (the route
/// table's `app.teamId`, `apns.teamId`, `apns.keyId`): 10 characters of A-Z and 0-9, as
/// Apple issues them.
public enum AppleIdentifier {
    /// Why `text` is not such an identifier (`name` says which one, for the message), or
    /// nil when it is one.
    public static func problem(with text: String, name: String) -> String? {
        let ok = text.utf8.count == 10 && text.utf8.allSatisfy { ASCII.isDigit($0) || ($0 >= 0x41 && $0 <= 0x5A) }
        return ok ? nil : "\(name) \(JSONWriter.quoted(text)) must be 10 characters of A-Z and 0-9"
    }
}
