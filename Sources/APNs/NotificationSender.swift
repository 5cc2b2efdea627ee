import Payloads
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
    /// The headers as sent: the configured topic override replaces `apns-topic`.
    func headers(topicOverride: String?) -> [HTTPHeader] {
        guard let topicOverride else { return headers }
        return headers.map { $0.name == "apns-topic" ? HTTPHeader("apns-topic", topicOverride) : $0 }
    }
}

extension DeliveryResult {
    /// What every sender reports when the key cannot sign a provider token.
    static func cannotSign(_ error: SigningKeyError) -> DeliveryResult {
        .transportFailed(TransportFailure(.transportError, "cannot sign a provider token: \(error.message)"))
    }
}
