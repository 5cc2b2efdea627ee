import APNsCore
import StrictJSON

/// A channel id as APNs gives it: a base64 string (ActivityKit's `PushType.channel(_:)`).
public enum BroadcastChannelID {
    /// pushgate's bound; Apple answers `BadChannelId` to one "greater than the allowed
    /// length" without documenting the length.
    public static let maximumLength = 256

    /// Why `text` cannot be a channel id (nil when it can): standard base64, padded.
    public static func problem(with text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return "a channel id is not empty" }
        guard bytes.count <= maximumLength else { return "a channel id is at most \(maximumLength) characters, this one has \(bytes.count)" }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        let body = bytes.dropLast(padding)
        let isBase64 = body.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "+") || b == UInt8(ascii: "/")
        }
        guard isBase64, padding <= 2, bytes.count % 4 == 0 else {
            return "a channel id is the base64 text APNs gave when the channel was created (A-Z a-z 0-9 + / and = padding, a multiple of 4 characters), not \(TextSafety.quoted(TextSafety.excerpt(text, limit: 64)))"
        }
        return nil
    }
}
