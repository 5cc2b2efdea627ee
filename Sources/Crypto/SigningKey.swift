internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif
import StrictJSON

/// A P-256 private key for ES256 provider tokens. Owns the OpenSSL `EVP_PKEY` and frees it
/// in deinit. Signing with one `EVP_PKEY` from several threads is safe in OpenSSL 3 (each
/// call makes its own `EVP_MD_CTX`), hence `@unchecked Sendable`.
public final class SigningKey: @unchecked Sendable {
    private let key: OpaquePointer
    /// Where the key came from, for messages: a file path or "ephemeral key".
    public let origin: String

    private init(key: OpaquePointer, origin: String) {
        self.key = key
        self.origin = origin
    }

    deinit { EVP_PKEY_free(key) }

    public var isEphemeral: Bool { origin == Self.ephemeralOrigin }
    static let ephemeralOrigin = "ephemeral key"

    /// Loads Apple's `.p8` file: an unencrypted PKCS#8 PEM holding a prime256v1 key.
    public static func load(file path: String) throws(SigningKeyError) -> SigningKey {
        guard let pem = readSmallFile(path) else {
            // errno first: building the quoted path may call into libc and change it.
            let reason = String(cString: strerror(errno))
            throw SigningKeyError(.keyFileUnreadable, "cannot read key file \(TextSafety.quoted(path)): \(reason)")
        }
        return try load(pem: pem, origin: path)
    }

    /// Parses PEM text; `origin` names the source in error messages.
    public static func load(pem: [UInt8], origin: String) throws(SigningKeyError) -> SigningKey {
        let text = String(decoding: pem, as: UTF8.self)
        let name = TextSafety.quoted(origin)
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            throw SigningKeyError(.keyEncrypted, "key file \(name) is encrypted; APNs .p8 keys are unencrypted PKCS#8 (decrypt it with 'openssl pkcs8 -in KEY -out KEY.p8')")
        }
        guard text.contains("-----BEGIN PRIVATE KEY-----") else {
            if text.contains("-----BEGIN EC PRIVATE KEY-----") || text.contains("-----BEGIN RSA PRIVATE KEY-----") {
                throw SigningKeyError(.keyNotPKCS8, "key file \(name) is not PKCS#8 (it holds a traditional 'BEGIN EC/RSA PRIVATE KEY' block); convert it with 'openssl pkcs8 -topk8 -nocrypt'")
            }
            throw SigningKeyError(.keyNotPKCS8, "key file \(name) holds no PKCS#8 'BEGIN PRIVATE KEY' block")
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let info = PEM_read_bio_PKCS8_PRIV_KEY_INFO(bio, nil, nil, nil) else { return nil }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            return EVP_PKCS82PKEY(info)
        }
        guard let key = parsed else {
            throw SigningKeyError(.keyInvalid, "key file \(name) holds a PKCS#8 block OpenSSL cannot decode" + OpenSSLErrorQueue.because())
        }
        let signingKey = SigningKey(key: key, origin: origin)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, signingKey.groupName == "prime256v1" else {
            throw SigningKeyError(.keyNotP256, "key file \(name) is not an EC P-256 (prime256v1) key, which ES256 requires")
        }
        return signingKey
    }

    /// A fresh P-256 key, for dry runs with no key configured. Nothing it signs is valid at Apple.
    public static func ephemeral() throws(SigningKeyError) -> SigningKey {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw SigningKeyError(.signingFailed, "cannot create an EC key context" + OpenSSLErrorQueue.because())
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
              EVP_PKEY_generate(ctx, &key) == 1, let key else {
            throw SigningKeyError(.signingFailed, "cannot generate an ephemeral P-256 key" + OpenSSLErrorQueue.because())
        }
        return SigningKey(key: key, origin: ephemeralOrigin)
    }

    private var groupName: String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// ES256: ECDSA P-256 over SHA-256, returned as raw r‖s (64 bytes).
    public func signES256(_ message: [UInt8]) throws(SigningKeyError) -> [UInt8] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let ctx = EVP_MD_CTX_new() else { throw SigningKeyError(.signingFailed, "cannot allocate a digest context" + OpenSSLErrorQueue.because()) }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            throw SigningKeyError(.signingFailed, "cannot initialise ES256 signing" + OpenSSLErrorQueue.because())
        }
        var der = [UInt8](repeating: 0, count: 80)  // a P-256 DER signature is at most 72 bytes
        var length = der.count
        let status = message.withUnsafeBufferPointer { m in
            EVP_DigestSign(ctx, &der, &length, m.baseAddress, m.count)
        }
        guard status == 1 else { throw SigningKeyError(.signingFailed, "ES256 signing failed" + OpenSSLErrorQueue.because()) }
        do {
            return try ECDSASignature.rawFromDER(Array(der.prefix(length)))
        } catch {
            throw SigningKeyError(.signingFailed, "OpenSSL returned a malformed signature: \(error.message)")
        }
    }

    /// The public key as DER SubjectPublicKeyInfo, so a verifier (tests, Apple's console)
    /// can check tokens. Never the private half.
    public func publicKeyDER() -> [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PUBKEY(key, &cursor)
        }
        return out
    }

    /// SHA-256 of `publicKeyDER()`, hex: names the key in shared storage without revealing it.
    public var publicKeyFingerprint: String { SHA256.hex(publicKeyDER()) }

    /// Reads at most `limit` bytes (64 KiB: a .p8 is a few hundred bytes, anything bigger is
    /// not a key); nil with `errno` set when it cannot.
    public static func readSmallFile(_ path: String, limit: Int = 65536) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk.prefix(n))
        }
        errno = EFBIG
        return nil
    }
}
