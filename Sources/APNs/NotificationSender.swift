import APNsCore
import Crypto
import CurlClient

/// Sends one notification and reports what became of it, after every retry. The one
/// entry point the CLI, the HTTP service and the dispatcher use.
public protocol NotificationSender: Sendable {
    nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult
    /// Where a task that calls `send` costs least: the task threads beside its transport's
    /// threads (`CurlHTTP2Transport.executors`); none when any executor does as well.
    var preferredExecutors: [any TaskExecutor] { get }
}

extension NotificationSender {
    public var preferredExecutors: [any TaskExecutor] { [] }
}

extension APNsRequest {
    /// The request as sent by an app: its configured topic override (`apns.topic`) replaces
    /// the campaign's topic.
    func overridingTopic(_ topicOverride: String?) -> APNsRequest {
        guard let topicOverride else { return self }
        return replacingTopic(with: topicOverride)
    }

    /// The header fields for the transport, in wire order (`forEachHeader`).
    var headerFields: [HeaderField] {
        var fields: [HeaderField] = []
        fields.reserveCapacity(7)
        forEachHeader { fields.append(HeaderField($0, $1)) }
        return fields
    }
}

extension DeliveryResult {
    /// What every sender reports when the key cannot sign a provider token.
    static func cannotSign(_ error: SigningKeyError) -> DeliveryResult {
        .transportFailed(TransportFailure(.transportError, "cannot sign a provider token: \(error.message)"))
    }
}
