/// One line of a device list (`send --devices FILE`, the lines after the campaign in an
/// `application/x-ndjson` body): spaces and tabs around the token are not part of it,
/// and blank lines and `#` comments are skipped. Everything else is a token or a problem
/// reported with its line number, never dropped.
public enum DeviceListLine {
    case skipped
    case token(Result<String, ValueProblem>)

    /// `bytes` is one line as `LineSplitter` cuts it (without LF and trailing CR).
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let text = Self.trimmed(bytes) else {
            self = .skipped
            return
        }
        self = .token(DeviceToken.normalize(String(decoding: text, as: UTF8.self)))
    }

    /// Whether the line is a valid token (`.token(.success)`), without making a string
    /// of it when it is already normal: for counting a list before it is read.
    public static func isDevice(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let text = trimmed(bytes) else { return false }
        if DeviceToken.isNormal(text) { return true }
        if case .token(.success) = DeviceListLine(bytes) { return true }
        return false
    }

    /// The line without the spaces and tabs around it; nil when blank or a comment.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var first = 0
        var last = bytes.count
        func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }
        while first < last && isBlank(bytes[first]) { first += 1 }
        while last > first && isBlank(bytes[last - 1]) { last -= 1 }
        if first == last || bytes[first] == UInt8(ascii: "#") { return nil }
        return UnsafeBufferPointer(rebasing: bytes[first..<last])
    }
}
