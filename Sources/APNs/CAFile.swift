import Crypto
import StrictJSON
#if canImport(Glibc)
import Glibc
#endif

/// The `caFile` setting, checked at start-up: libcurl would only find out at the first
/// handshake, and then fail every device with "libcurl error 77".
enum CAFile {
    /// A CA bundle is at most a few hundred KiB (Debian's whole bundle is ~220 KiB).
    static let limit = 4 << 20

    /// Throws unless `path` can be read and holds at least one PEM certificate OpenSSL
    /// can decode. Returns how many it holds.
    @discardableResult
    static func check(_ path: String) throws(APNsConfigurationError) -> Int {
        let shown = TextSafety.quoted(path)
        guard let pem = SigningKey.readSmallFile(path, limit: limit) else {
            let reason = errno == EFBIG ? "bigger than 4 MiB" : String(cString: strerror(errno))
            throw APNsConfigurationError(.caFileUnreadable, at: JSONPath.root.appending("apns").appending("caFile"), "cannot read CA file \(shown): \(reason)")
        }
        let (count, because) = PEMCertificates.decode(pem)
        guard count > 0 else {
            throw APNsConfigurationError(.caFileNotPEM, at: JSONPath.root.appending("apns").appending("caFile"),
                                         "CA file \(shown) holds no PEM certificate (a '-----BEGIN CERTIFICATE-----' block OpenSSL can decode)" + because)
        }
        return count
    }
}
