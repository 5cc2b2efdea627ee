import APNsCore
import Crypto
import CurlClient

/// Sends one notification and reports what became of it, after every retry. The one
/// entry point the CLI, the HTTP service and the dispatcher use.
public protocol NotificationSender: Sendable {
    nonisolated(nonsending) func send(_ request: APNsRequest) async -> DeliveryResult
    /// The same, answered through `done`, once, on whichever thread learns the result:
    /// `done` must be quick and must not block (it may run on a transport thread). What
    /// has to wait runs in a task on `executor`. The default awaits `send` in such a task.
    func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor, then done: @escaping @Sendable (DeliveryResult) -> Void)
}

extension NotificationSender {
    public func send(_ request: APNsRequest, awaitingOn executor: any TaskExecutor,
                     then done: @escaping @Sendable (DeliveryResult) -> Void) {
        Task(executorPreference: executor) { done(await send(request)) }
    }
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
