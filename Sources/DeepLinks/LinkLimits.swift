/// The canonicaliser's fixed limits.
public enum LinkLimits {
    /// Longest accepted link, and longest canonical form, in UTF-8 bytes.
    public static let maxBytes = 2048
    public static let maxPathSegments = 32
    public static let maxQueryItems = 64
}
