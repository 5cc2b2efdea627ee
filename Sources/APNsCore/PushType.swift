/// Apple's `apns-push-type` values, with the topic suffix and payload limit each implies.
public enum PushType: String, Sendable, CaseIterable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets
    /// Reloads a control (`ControlWidget`) that registered a push handler.
    case controls

    /// Appended to the app's bundle id to form `apns-topic`. MDM uses the topic of the
    /// MDM push certificate as it is (`com.apple.mgmt.External.<uuid>`), so no suffix.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: return ""
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .location: return ".location-query"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        }
    }

    /// The largest body APNs accepts for this push type, in bytes.
    public var payloadLimit: Int {
        self == .voip ? 5120 : 4096
    }

    /// The priority used when the campaign does not give one: background pushes must be 5.
    public var defaultPriority: Int {
        self == .background ? 5 : 10
    }
}
