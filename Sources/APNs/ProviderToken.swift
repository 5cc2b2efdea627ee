import StrictJSON
import Crypto

/// A signed ES256 provider token (JWT). Its description is redacted so that printing or
/// logging one by accident leaks nothing; `bearerValue` is for the `authorization` header.
public struct ProviderToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token's parts, shared by its copies: every send takes one (from
    /// `ProviderTokenManager.admit`), and a copy is then one reference, not three strings.
    private final class Parts: Sendable {
        let compact: String
        let issuedAt: Int64
        let keyId: String
        let bearerValue: String

        init(compact: String, issuedAt: Int64, keyId: String) {
            self.compact = compact
            self.issuedAt = issuedAt
            self.keyId = keyId
            bearerValue = "bearer " + compact
        }
    }

    private let parts: Parts

    /// The compact JWS: header.claims.signature.
    public var compact: String { parts.compact }
    /// `iat`, seconds since 1970.
    public var issuedAt: Int64 { parts.issuedAt }
    public var keyId: String { parts.keyId }

    /// A token as read back from storage (the store holds what `sign` produced).
    public init(compact: String, issuedAt: Int64, keyId: String) {
        parts = Parts(compact: compact, issuedAt: issuedAt, keyId: keyId)
    }

    /// `bearer <compact>`, made once: every request of the token's life carries it.
    public var bearerValue: String { parts.bearerValue }

    /// Equal parts (`bearerValue` follows from `compact`).
    public static func == (a: ProviderToken, b: ProviderToken) -> Bool {
        a.parts === b.parts || (a.compact == b.compact && a.issuedAt == b.issuedAt && a.keyId == b.keyId)
    }

    public var description: String { "ProviderToken(kid: \(keyId), iat: \(issuedAt), <redacted>)" }
    public var debugDescription: String { description }

    /// Builds and signs `{"alg":"ES256","kid":KEY_ID}.{"iss":TEAM_ID,"iat":SECONDS}`.
    /// Both JSON texts are written with JSONWriter so that no input can break out of a string.
    public static func sign(teamId: String, keyId: String, issuedAt: Int64, key: SigningKey) throws(SigningKeyError) -> ProviderToken {
        let header = JSONWriter.bytes(capacity: 48) { w in
            w.object { w in
                w.member("alg", "ES256")
                w.member("kid", keyId)
            }
        }
        let claims = JSONWriter.bytes(capacity: 48) { w in
            w.object { w in
                w.member("iss", teamId)
                w.member("iat", issuedAt)
            }
        }
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try key.signES256(Array(signingInput.utf8))
        return ProviderToken(compact: signingInput + "." + Base64URL.encode(signature), issuedAt: issuedAt, keyId: keyId)
    }
}
