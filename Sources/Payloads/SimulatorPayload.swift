import APNsCore
import StrictJSON

/// The `.apns` file format `xcrun simctl push booted FILE` (and dropping the file on a
/// Simulator) reads: the exact body the gateway would send, with a top-level
/// `"Simulator Target Bundle"` naming the app. The Simulator takes only alert and
/// background pushes, and payloads of at most 4096 bytes. `pushgate preview --simulator`
/// and the preview answer (for the `/ui` page's download) both build files here.
public enum SimulatorPayload {
    public static let targetBundleKey = "Simulator Target Bundle"
    public static let maxFileBytes = 4096

    public static func accepts(_ pushType: PushType) -> Bool {
        pushType == .alert || pushType == .background
    }

    /// `{"Simulator Target Bundle":"…",` + the body without its opening brace, and a newline.
    public static func fileBytes(body: [UInt8], bundle: String) -> [UInt8] {
        var out: [UInt8] = Array("{".utf8)
        JSONWriter.appendQuoted(targetBundleKey, to: &out)
        out.append(UInt8(ascii: ":"))
        JSONWriter.appendQuoted(bundle, to: &out)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: body.dropFirst())
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// `device-<n>-<first 8 hex digits>-<locale or "default">.apns`; `index` counts from 0.
    public static func fileName(index: Int, token: String, locale: String?) -> String {
        "device-\(index + 1)-\(token.prefix(8))-\(locale ?? "default").apns"
    }
}
