/// The canonicaliser's fixed limits.
public enum LinkLimits {
    /// Longest accepted link, and longest canonical form, in UTF-8 bytes.
    public static let maxBytes = 2048
    public static let maxPathSegments = 32
    public static let maxQueryItems = 64
    /// Lines of `check-link --stdin` up to this many bytes (a trailing CR included) are
    /// checked; longer ones are answered `tooLong` while being skipped, never held.
    public static let maxLineBytes = maxBytes + 2048
}
