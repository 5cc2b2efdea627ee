import APNs
import DeepLinks

extension RouteTable {
    /// SHA-256 (lowercase hex) of `fingerprintText`: what `pushgate routes fingerprint`
    /// prints, `GET /v1/routes` reports and a generated router carries as `tableFingerprint`.
    public var fingerprint: String { SHA256.hex(Array(fingerprintText.utf8)) }
}
