/// pushgate's version: the one place it is written. `pushgate --version` prints it and the
/// OpenAPI document's `info.version` carries it.
public enum PushgateVersion {
    public static let current = "0.1.0"
}
