/// An app's name, as the configuration gives it and the API's `app` parameters take it. It
/// becomes part of environment variables (`PUSHGATE_APPS_SHOP_APNS_KEY_FILE`), so it is lower
/// case letters, digits and `_`, starting with a letter.
public enum AppName {
    public static let rule = "1 to 32 lower-case letters, digits or _, starting with a letter"

    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...32).contains(bytes.count), let first = bytes.first, (0x61...0x7A).contains(first) else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }
}
