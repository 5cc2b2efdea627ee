import DeepLinks
import StrictJSON

/// The stable reasons a campaign or one of its requests is refused. The raw values are
/// the contract shared by the CLI's `--json`, the HTTP API and the metrics.
public enum PayloadErrorCode: String, Sendable, CaseIterable {
    // Shape of the campaign document.
    case invalidJSON
    case unknownKey
    case missing
    case wrongType
    case invalidValue
    case conflictingFields
    case nothingToSend
    // Devices.
    case noDevices
    case invalidToken
    case duplicateDevice
    // Templates.
    case unknownTemplate
    case invalidTemplate
    case missingVariable
    // Deep links: the problem carries the link's own `LinkErrorCode` too.
    case deeplinkRejected
    // Apple's rules.
    case invalidPriority
    case backgroundRequiresContentAvailable
    case backgroundRequiresPriority5
    case backgroundForbidsAlert
    case backgroundForbidsSound
    case backgroundForbidsBadge
    case collapseIdTooLong
    case relevanceScoreOutOfRange
    case invalidExpiration
    case reservedDataKey
    // Live Activities (ActivityKit push notifications).
    /// The event (or the alert) needs a member that is missing.
    case liveActivityRequiresMember
    /// A member the event, or an ActivityKit payload at all, has no place for.
    case liveActivityForbidsMember
    /// A priority other than 10 or 5.
    case liveActivityPriority
    /// `stale_date` not after the timestamp, or `dismissal_date` more than four hours after it.
    case liveActivityDateOrder
    /// A member a fixed body (`widgets`, `controls`, `mdm`) has no place for.
    case pushTypeForbidsMember
    /// Priority 1 (the device's power first, never woken) on a push that must interrupt:
    /// interruption level `time-sensitive` or `critical`, or a critical sound.
    case priorityOneCannotInterrupt
    /// An `mdm` push signed with a provider token: Apple takes MDM pushes only over a
    /// connection authenticated with the MDM push certificate.
    case mdmRequiresCertificate
    /// A number in `data`, `relevance_score` or a template variable that a phone's
    /// parser cannot read as written (beyond a double's range, or an integer past ±2^53).
    case unsafeNumber
    case payloadTooLarge
    // Broadcast channels (a campaign with `channel` instead of `devices`).
    /// Not a channel id APNs could have given (standard base64 with `=` padding).
    case invalidChannelId
    /// A channel campaign whose push type is not `liveactivity`: channels carry Live
    /// Activity pushes only.
    case channelRequiresLiveActivity
    /// A member a broadcast has no place for (`collapse_id`, a `start` event, device variables).
    case channelForbidsMember
}

/// One problem, with where it is in the campaign document and a message that quotes
/// input only escaped.
public struct PayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: PayloadErrorCode
    /// Set when `code` is `.deeplinkRejected`: the canonicaliser's reason.
    public var linkCode: LinkErrorCode?
    public var path: JSONPath
    public var message: String

    public init(_ code: PayloadErrorCode, at path: JSONPath, _ message: String, linkCode: LinkErrorCode? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.linkCode = linkCode
    }

    /// The code shown to people and machines: a rejected link reports the link's code
    /// (`hostNotAllowed`), everything else its own.
    public var stableCode: String { linkCode?.rawValue ?? code.rawValue }

    /// The problem as the program says every problem: code, pointer, message.
    public var diagnostic: Diagnostic {
        Diagnostic(DiagnosticCode(rawValue: stableCode), at: .pointer(path), message)
    }

    /// `devices[17]: token is not hex … [invalidToken]`
    public var description: String { diagnostic.description }
}

extension PayloadErrorCode {
    public var diagnosticCode: DiagnosticCode { DiagnosticCode(rawValue: rawValue) }
}

extension DiagnosticDomain {
    /// Campaigns, templates and Apple's payload rules. The shape codes they share with every
    /// document are in `DiagnosticDomain.document`; `deeplinkRejected` never shows, because
    /// a rejected link reports the link's own code.
    public static let campaign = DiagnosticDomain("campaign", PayloadErrorCode.allCases.filter { $0 != .deeplinkRejected }
        .map(\.diagnosticCode)
        .filter { !DiagnosticDomain.document.codes.contains($0) && !DiagnosticDomain.json.codes.contains($0) })
}

/// Every problem found in a campaign, in document order — never only the first.
public struct CampaignRejection: Error, Sendable, Equatable {
    public var problems: [PayloadError]

    public init(problems: [PayloadError]) {
        self.problems = problems
    }
}

/// Why one value is not acceptable, before it is placed in the document (the caller adds
/// the code and the path).
public struct ValueProblem: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
