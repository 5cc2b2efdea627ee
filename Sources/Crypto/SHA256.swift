internal import COpenSSL
import StrictJSON

/// SHA-256 through OpenSSL's one-shot digest (API key hashes, signing-key fingerprints).
public enum SHA256 {
    public static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        return Hex.encode(digest)
    }
}
