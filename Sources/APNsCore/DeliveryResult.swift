import StrictJSON

/// What happened to one notification, after every retry.
public enum DeliveryResult: Sendable, Equatable {
    /// APNs accepted it (HTTP 200) and gave it this `apns-id`; the sandbox also gives an
    /// `apns-unique-id`, which the Push Notifications Console looks up.
    case delivered(apnsId: String, uniqueId: String? = nil)
    /// APNs refused it for good, or transient failures outlasted the retry budget.
    /// `retryAfterSeconds`: APNs' `Retry-After` on that last answer (no attempt before it).
    case failed(status: Int, reason: APNsReason, retryAfterSeconds: Int? = nil)
    /// 410: the token is dead. `timestampMilliseconds` is when Apple last knew it valid.
    case unregistered(reason: APNsReason, timestampMilliseconds: Int64?)
    /// No answer from APNs: deadline passed, or the connection could not be made.
    case transportFailed(TransportFailure)
    /// Dry run: the request that would have been sent, signed, with nothing sent.
    case dryRun(PreparedRequest)

    /// A stable, short label for summaries, metrics and `--json`.
    public var label: String {
        switch self {
        case .delivered: return "delivered"
        case .failed: return "failed"
        case .unregistered: return "unregistered"
        case .transportFailed: return "failed"
        case .dryRun: return "dry-run"
        }
    }

    /// The reason a summary groups failures by: Apple's reason name for Apple's answers,
    /// pushgate's transport code (`DiagnosticDomain.delivery`) when no answer came.
    public var failureReason: String? {
        switch self {
        case .failed(_, let reason, _): return reason.rawValue
        case .unregistered(let reason, _): return reason.rawValue
        case .transportFailed(let failure): return failure.code.rawValue
        case .delivered, .dryRun: return nil
        }
    }
}

/// A request exactly as it goes on the wire (dry run output). The provider token is
/// shown redacted: tokens never appear in output or logs.
public struct PreparedRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    /// The request's own id, typed (its `apns-id`, or a broadcast's `apns-request-id`),
    /// nil when APNs would choose it.
    public var apnsID: String?

    public init(method: String, url: String, headers: [HTTPHeader], body: [UInt8], apnsID: String? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.apnsID = apnsID
    }
}

extension DiagnosticCode {
    /// A device's reason as Apple named it (`BadDeviceToken`, `Unregistered`, …).
    public init(_ reason: APNsReason) { self.init(rawValue: reason.rawValue) }
}

extension DiagnosticDomain {
    /// Apple's reasons, by Apple's names: a device's result for Apple's answers.
    public static let apns = DiagnosticDomain("apns", APNsReason.documented.map { DiagnosticCode(rawValue: $0.string) })
    /// pushgate's own decisions about a device when Apple gave no answer.
    public static let delivery = DiagnosticDomain("delivery", TransportFailure.Code.allCases.map { DiagnosticCode(rawValue: $0.rawValue) })
}
