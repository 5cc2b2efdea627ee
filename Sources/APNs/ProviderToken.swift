import StrictJSON

/// A signed ES256 provider token (JWT). Its description is redacted so that printing or
/// logging one by accident leaks nothing; `bearerValue` is for the `authorization` header.
public struct ProviderToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The compact JWS: header.claims.signature.
    public let compact: String
    /// `iat`, seconds since 1970.
    public let issuedAt: Int64
    public let keyId: String

    /// A token as read back from storage (the store holds what `sign` produced).
    public init(compact: String, issuedAt: Int64, keyId: String) {
        self.compact = compact
        self.issuedAt = issuedAt
        self.keyId = keyId
        bearerValue = "bearer " + compact
    }

    /// `bearer <compact>`, made once: every request of the token's life carries it.
    public let bearerValue: String

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
