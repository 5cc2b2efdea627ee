import APNsCore
import APNs
import Foundation
import Payloads
import TestSupport
import Timing
import Crypto
import CurlClient

enum TestRequests {
    /// A 64-hex-digit device token, distinct per `index`.
    static func token(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    static func alert(_ index: Int, body: String = #"{"aps":{"alert":"hello"}}"#) -> APNsRequest {
        let token = token(index)
        return APNsRequest(deviceToken: token, path: "/3/device/" + token, pushType: .alert, topic: "com.example.app", priority: 10,
                           body: Array(body.utf8))
    }
}

/// A client against `fake` with the fixture key, real transport.
func makeClient(_ fake: FakeAPNs, retry: RetryPolicy = RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 20, maxBackoffMilliseconds: 200),
                timeoutMilliseconds: Int = 5_000, clock: any TimeSource = SystemClock(),
                connections: Int = 1, maxConcurrentStreams: Int = TransportSettings(baseURL: "").maxConcurrentStreams)
    throws -> (APNsClient, ProviderTokenManager, CurlHTTP2Transport) {
    let key = try SigningKey.load(file: FakeAPNs.keyFile)
    let tokens = ProviderTokenManager(key: key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: clock)
    let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile, connections: connections,
                                                                        maxConcurrentStreams: maxConcurrentStreams,
                                                                        timeoutMilliseconds: timeoutMilliseconds), clock: SystemClock())
    return (APNsClient(transport: transport, tokens: tokens, retry: retry, clock: SystemClock()), tokens, transport)
}

/// Sends every request with at most `concurrency` in flight; results in request order.
/// `throughCallbacks`: as the dispatcher sends (`send(_:awaitingOn:then:)`), not awaiting `send`.
func sendAll(_ sender: any NotificationSender, _ requests: [APNsRequest], concurrency: Int = 100,
             throughCallbacks: Bool = false) async -> [DeliveryResult] {
    var results = [DeliveryResult?](repeating: nil, count: requests.count)
    await withTaskGroup(of: (Int, DeliveryResult).self) { group in
        var next = 0
        func addNext() {
            guard next < requests.count else { return }
            let index = next
            let request = requests[index]
            if throughCallbacks {
                group.addTask { (index, await sender.sendThroughCallback(request)) }
            } else {
                group.addTask { (index, await sender.send(request)) }
            }
            next += 1
        }
        for _ in 0..<concurrency { addNext() }
        while let (index, result) = await group.next() {
            results[index] = result
            addNext()
        }
    }
    return results.map { $0 ?? .transportFailed(TransportFailure(.cancelled, "missing")) }
}

extension NotificationSender {
    /// `send(_:awaitingOn:then:)`, awaited: the path the dispatcher takes.
    func sendThroughCallback(_ request: APNsRequest) async -> DeliveryResult {
        await withCheckedContinuation { answer in
            send(request, awaitingOn: globalConcurrentExecutor) { answer.resume(returning: $0) }
        }
    }
}

extension DeliveryResult {
    var isDelivered: Bool { if case .delivered = self { true } else { false } }
    /// The transport's failure, when the request ended with one.
    var transportFailure: TransportFailure? { if case .transportFailed(let failure) = self { failure } else { nil } }
}
