internal import COpenSSL
import StrictJSON

/// HMAC-SHA256 through OpenSSL's one-shot `HMAC`.
public enum HMACSHA256 {
    public static func hex(key: [UInt8], message: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                         &digest, &length)
            }
        }
        return Hex.encode(digest.prefix(Int(length)))
    }
}
