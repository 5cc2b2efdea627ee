import CurlClient

/// One blocking HTTP POST for the feedback webhook (a few requests a minute at most: the
/// HTTP/2 APNs transport would be overkill), through CurlClient's `BlockingRequest`, the
/// one channel management uses too: TLS 1.2+, verified.
enum WebhookPoster {
    /// The HTTP status, or why there was none.
    static func post(url: String, body: [UInt8], headers: [String], timeoutSeconds: Int) -> Result<Int, WebhookFailure> {
        // HTTP/1.1, or HTTP/2 where TLS offers it; proxies from the environment apply.
        let exchange = BlockingRequest(httpVersion: .negotiated, timeoutMilliseconds: timeoutSeconds * 1000,
                                       usesProxyEnvironment: true, keepsAnswer: false)
        switch exchange.perform(OneShotRequest(method: "POST", url: url, headerLines: headers, body: body)) {
        case .success(let answer): return .success(answer.status)
        case .failure(let failure): return .failure(WebhookFailure(failure.message))
        }
    }
}

/// Why a webhook delivery did not succeed, for the log.
struct WebhookFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
