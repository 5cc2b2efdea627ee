internal import COpenSSL

/// Comparison whose time does not depend on where two secrets differ (OpenSSL's
/// `CRYPTO_memcmp`): an attacker timing answers learns nothing of a stored hash.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Lengths are compared first and openly:
    /// callers compare fixed-length digests, whose length is no secret.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
    }
}
