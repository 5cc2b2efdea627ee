/// Every `reason` Apple documents for an APNs error response, mapped both ways, with a
/// fallback that keeps any string Apple adds later.
public enum APNsReason: Sendable, Hashable, CustomStringConvertible {
    // 400
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType
    case missingDeviceToken, missingTopic, payloadEmpty, topicDisallowed
    // 400, broadcast channels (the management API and the broadcast send path)
    case missingChannelId, badChannelId, channelNotRegistered, cannotCreateChannelConfig, featureNotEnabled, missingPushType
    // 403
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden
    case invalidProviderToken, missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken, badEnvironmentKeyInToken
    // 404, 405
    case badPath, methodNotAllowed
    // 410
    case expiredToken, unregistered
    // 413
    case payloadTooLarge
    // 429
    case tooManyProviderTokenUpdates, tooManyRequests
    // 500, 503
    case internalServerError, serviceUnavailable, shutdown
    /// A reason this code does not know; the string is kept as Apple sent it.
    case unknown(String)

    /// Every documented reason with its string and the status Apple sends it with.
    public static let documented: [(reason: APNsReason, string: String, status: Int)] = [
        (.badCollapseId, "BadCollapseId", 400), (.badDeviceToken, "BadDeviceToken", 400),
        (.badExpirationDate, "BadExpirationDate", 400), (.badMessageId, "BadMessageId", 400),
        (.badPriority, "BadPriority", 400), (.badTopic, "BadTopic", 400),
        (.deviceTokenNotForTopic, "DeviceTokenNotForTopic", 400), (.duplicateHeaders, "DuplicateHeaders", 400),
        (.idleTimeout, "IdleTimeout", 400), (.invalidPushType, "InvalidPushType", 400),
        (.missingDeviceToken, "MissingDeviceToken", 400), (.missingTopic, "MissingTopic", 400),
        (.payloadEmpty, "PayloadEmpty", 400), (.topicDisallowed, "TopicDisallowed", 400),
        (.missingChannelId, "MissingChannelId", 400), (.badChannelId, "BadChannelId", 400),
        (.channelNotRegistered, "ChannelNotRegistered", 400), (.cannotCreateChannelConfig, "CannotCreateChannelConfig", 400),
        (.featureNotEnabled, "FeatureNotEnabled", 400), (.missingPushType, "MissingPushType", 400),
        (.badCertificate, "BadCertificate", 403), (.badCertificateEnvironment, "BadCertificateEnvironment", 403),
        (.expiredProviderToken, "ExpiredProviderToken", 403), (.forbidden, "Forbidden", 403),
        (.invalidProviderToken, "InvalidProviderToken", 403), (.missingProviderToken, "MissingProviderToken", 403),
        (.unrelatedKeyIdInToken, "UnrelatedKeyIdInToken", 403),
        (.badEnvironmentKeyIdInToken, "BadEnvironmentKeyIdInToken", 403),
        (.badEnvironmentKeyInToken, "BadEnvironmentKeyInToken", 403),
        (.badPath, "BadPath", 404), (.methodNotAllowed, "MethodNotAllowed", 405),
        (.expiredToken, "ExpiredToken", 410), (.unregistered, "Unregistered", 410),
        (.payloadTooLarge, "PayloadTooLarge", 413),
        (.tooManyProviderTokenUpdates, "TooManyProviderTokenUpdates", 429), (.tooManyRequests, "TooManyRequests", 429),
        (.internalServerError, "InternalServerError", 500),
        (.serviceUnavailable, "ServiceUnavailable", 503), (.shutdown, "Shutdown", 503),
    ]

    private static let byString: [String: APNsReason] = {
        var map: [String: APNsReason] = [:]
        for entry in documented { map[entry.string] = entry.reason }
        return map
    }()

    private static let byReason: [APNsReason: String] = {
        var map: [APNsReason: String] = [:]
        for entry in documented where map[entry.reason] == nil { map[entry.reason] = entry.string }
        return map
    }()

    public init(_ string: String) {
        self = Self.byString[string] ?? .unknown(string)
    }

    /// Apple's string for the reason.
    public var rawValue: String {
        if case .unknown(let text) = self { return text }
        return Self.byReason[self] ?? ""
    }

    public var description: String { rawValue }
}
