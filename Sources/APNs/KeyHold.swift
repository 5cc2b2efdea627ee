import APNsCore
import Timing

/// Sends with a signing key are held: APNs said the key, not the device, is the problem,
/// so every request signed with it would fail the same way. The one mechanism behind
/// `TooManyProviderTokenUpdates` (a pause that ends by itself) and the authentication
/// failures (a stop that ends when a probe is accepted). While a hold lasts, a send
/// answers `keyStopped` at once, without a request to APNs; `serve` claims nothing for the
/// apps that sign with the key (the other apps go on) and
/// `pushgate send` ends with one error.
public struct KeyHold: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `TooManyProviderTokenUpdates`: sends resume by themselves at `until`.
        case paused
        /// An authentication failure: sends resume when a probe (one real request, let
        /// through at `until`) gets an answer that is not about the key, or at a restart.
        case stopped
    }

    public var kind: Kind
    /// Apple's reason for the answer that started the hold.
    public var reason: APNsReason
    public var keyId: String
    /// When it started (seconds since 1970).
    public var since: Int64
    /// `paused`: when it ends. `stopped`: when the next probe may go.
    public var until: Int64
    /// Why, for the operator: `pushgate send`'s error line, `/readyz`, every held device.
    public var explanation: String

    /// What every send answers while the hold lasts (and the sends that met the refusal).
    public var failure: TransportFailure { TransportFailure(.keyStopped, explanation) }

    /// The reasons meaning that APNs accepts nothing signed with the key.
    public static func stopsTheKey(_ reason: APNsReason) -> Bool {
        switch reason {
        case .invalidProviderToken, .expiredProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
             .badEnvironmentKeyInToken:
            return true
        default:
            return false
        }
    }

    /// What the refusal means and what to do, per reason. `tokenAgeSeconds` is the age of
    /// the token APNs refused, by this host's clock.
    static func explanation(_ reason: APNsReason, keyId: String, teamId: String, tokenAgeSeconds: Int64) -> String {
        let key = "key \(keyId) (team \(teamId))"
        let answered = "APNs answered 403 \(reason.rawValue)"
        let stopped = "sends with \(key) are stopped"
        switch reason {
        case .expiredProviderToken:
            return "\(answered) to a provider token issued \(tokenAgeSeconds) s ago by this host's clock, which APNs accepts for an hour: "
                + "the clocks of this host and Apple disagree (clock skew); fix the system clock (NTP). \(stopped)"
        case .invalidProviderToken:
            return "\(answered): \(stopped); APNs does not accept tokens signed with it (a revoked key, or a keyFile, keyId or "
                + "teamId that do not belong together)"
        case .unrelatedKeyIdInToken:
            return "\(answered): \(stopped); the key id in the token is not related to the key of the token this connection "
                + "started with"
        case .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return "\(answered): \(stopped); the key is not valid for this APNs environment (apns.environment: sandbox or "
                + "production, as the key is set up in Apple's developer account)"
        default:
            return "\(answered): \(stopped)"
        }
    }

    /// A pause after `TooManyProviderTokenUpdates`, ending at `until`.
    static func paused(keyId: String, since: Int64, until: Int64) -> KeyHold {
        KeyHold(kind: .paused, reason: .tooManyProviderTokenUpdates, keyId: keyId, since: since, until: until,
                explanation: "APNs answered 429 TooManyProviderTokenUpdates: sends with key \(keyId) are paused "
                    + "for every process sharing this storage, until 20 minutes after the refused token was issued")
    }
}

/// The stop after an authentication failure, inside `ProviderTokenManager`: when the next
/// probe may go, whether one is out, and how many failed (the probe backoff).
struct KeyStop: Sendable, Equatable {
    var hold: KeyHold
    var failedProbes = 0
    var probeInFlight = false
}
