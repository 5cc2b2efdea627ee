import StrictJSON

/// Device tokens as APNs wants them in the path: lowercase hex. Apple does not promise
/// 64 digits, so anything of even length from 64 to 200 digits is accepted.
public enum DeviceToken {
    public static let minimumDigits = 64
    public static let maximumDigits = 200

    /// The token with spaces, `<` and `>` removed and hex letters lowercased (the forms
    /// people paste from Xcode logs), or why it cannot be one.
    public static func normalize(_ text: String) -> Result<String, ValueProblem> {
        // Nearly every token arrives already normal: then it is the answer, not a copy.
        if isNormal(text) { return .success(text) }
        var digits: [UInt8] = []
        digits.reserveCapacity(min(text.utf8.count, maximumDigits + 1))
        var position = 0
        for scalar in text.unicodeScalars {
            position += 1
            switch scalar.value {
            case 0x20, 0x3C, 0x3E:  // space < >
                continue
            case 0x30...0x39, 0x61...0x66:
                digits.append(UInt8(scalar.value))
            case 0x41...0x46:
                digits.append(UInt8(scalar.value) + 0x20)
            default:
                let shown = TextSafety.quoted(scalar)
                return .failure(ValueProblem("not hex: \(shown) at character \(position)"))
            }
            if digits.count > maximumDigits { break }
        }
        if digits.isEmpty { return .failure(ValueProblem("empty token")) }
        if digits.count > maximumDigits {
            return .failure(ValueProblem("too long: more than \(maximumDigits) hex digits"))
        }
        if digits.count < minimumDigits {
            return .failure(ValueProblem("too short: \(digits.count) hex digits, at least \(minimumDigits) expected"))
        }
        if digits.count % 2 != 0 {
            return .failure(ValueProblem("odd number of hex digits (\(digits.count)): a token is whole bytes"))
        }
        return .success(String(decoding: digits, as: UTF8.self))
    }

    /// Lowercase hex of an even length in range, read as UTF-8 bytes in place.
    private static func isNormal(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isNormal) ?? false
    }

    /// Whether `bytes` are a token already normal (`normalize` would return them as they are).
    public static func isNormal(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= minimumDigits && bytes.count <= maximumDigits && bytes.count % 2 == 0 && Hex.isLowercaseDigits(bytes)
    }
}
