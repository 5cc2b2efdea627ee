import APNs
import DeepLinks
import HTTPServer
import Outbox
import Payloads
import Storage
import StrictJSON

extension DiagnosticCode {
    /// Two apps that cannot be configured together (one bundle id; one host and path for two teams).
    public static let appsConflict = DiagnosticCode(rawValue: "appsConflict")
    /// No configured app has that name (or the caller's key may not use it).
    public static let unknownApp = DiagnosticCode(rawValue: "unknownApp")
    /// A state name `?state=` does not know is `invalidValue`; a lifecycle action on a
    /// finished campaign is this problem (409).
    public static let campaignFinished = DiagnosticCode(rawValue: "campaignFinished")
}

extension DiagnosticDomain {
    /// Several apps in one gateway.
    public static let apps = DiagnosticDomain("apps", [.appsConflict, .unknownApp])
    /// A campaign's `send_at` and `expires_at` against the clock.
    public static let schedule = DiagnosticDomain("schedule", [.scheduleInPast, .expiresBeforeSendAt])
    /// The dispatcher's own decisions about a device (beside the transport's).
    public static let dispatcher = DiagnosticDomain("dispatcher", [.campaignMissing, .unknownStoredPushType])
    /// The database behind durable campaigns (in `storageUnavailable` details and at start-up).
    public static let storage = DiagnosticDomain("storage", StorageError.Code.allCases.map { DiagnosticCode(rawValue: $0.rawValue) })
    /// The HTTP server failing to start.
    public static let server = DiagnosticDomain("server", HTTPServerError.Code.allCases.map { DiagnosticCode(rawValue: $0.rawValue) })
}

/// Every code the program can produce, by domain: the list docs/errors.md must match (a
/// test compares them both ways, and with the OpenAPI document).
public enum DiagnosticCatalogue {
    public static let domains: [DiagnosticDomain] = [
        .json, .document, .files, .apps, .link, .routeTable, .campaign, .schedule, .liveActivity, .request, .framing, .problem,
        .apns, .delivery, .dispatcher, .signingKey, .channels, .aasa, .storage, .server,
    ]

    /// Codes an HTTP client can see in a problem's `errors[]`.
    public static var inProblemErrors: Set<DiagnosticCode> {
        let own: [DiagnosticCode] = [.idempotencyKeyReused, .confirmationRequired, .unknownApp, .campaignFinished, .partConflict, .notFilling,
                                     .unknownActivity, .activityTokenLimit, .appTokenLimit]
        let domains: [DiagnosticDomain] = [.json, .document, .link, .campaign, .schedule, .request, .framing,
                                           // A channel request's answer: pushgate's check, Apple's reason, or why none came.
                                           .channels, .apns, .delivery]
        return Set(domains.flatMap(\.codes) + own)
    }

    /// Codes a device's `reason` can hold: Apple's names, and pushgate's for local decisions.
    public static let deviceReasons: [DiagnosticDomain] = [.apns, .delivery, .dispatcher, .link, .campaign]

    public static var all: Set<DiagnosticCode> { Set(domains.flatMap(\.codes)) }
}
