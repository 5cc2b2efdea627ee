import Foundation
import HTTPServer
import Storage
import StrictJSON
import Synchronization
import Testing
import TestSupport
@testable import Gateway
@testable import Outbox
import Crypto
import Timing

/// A loopback HTTP receiver that fails the first `failures` requests with 503.
final class WebhookReceiver: HTTPResponder {
    let failures: Int
    let received = Mutex<[HTTPRequest]>([])

    init(failures: Int) { self.failures = failures }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let n = received.withLock { list -> Int in
            list.append(request)
            return list.count
        }
        return HTTPResponse(status: n <= failures ? 503 : 204, headers: [], body: [])
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { HTTPResponse(status: 413, headers: [], body: []) }
    func shuttingDown(_ request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 503, headers: [], body: []) }
}

@Suite struct FeedbackWebhookTests {
    static let secret = "0123456789abcdef-webhook-secret"

    /// A database holding `count` dead tokens in the feedback outbox.
    func storageWithDeadTokens(_ count: Int) throws -> SQLiteCampaignStorage {
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let campaign = NewCampaign(id: "c1", createdAt: 1, dryRun: false, message: StoredMessage(pushType: "alert", topic: "t", priority: 10), body: Array("{}".utf8), apnsIDPrefix: "00000000-0000-4000-8000-")
        _ = try storage.insert(campaign, deliveries: (0..<count).map { NewDelivery(token: Fixtures.token("dead", $0)) }, now: 1)
        let claimed = try storage.claim(limit: count, lease: LeaseTerms(owner: "test", seconds: 30), now: 1)
        try storage.record(claimed.map {
            DeliveryUpdate(campaign: $0.campaign, index: $0.index, state: .unregistered, status: 410, reason: "Unregistered",
                           timestampMilliseconds: 1_700_000_000_000 + Int64($0.index), lease: $0.lease)
        }, now: 2)
        // The campaign finished too: its campaign.finished event is another test's business.
        try storage.acknowledgeCampaignEvents(through: Int64.max)
        return storage
    }

    func settings(port: Int, batchSize: Int = 500) -> DurableSettings.Webhook {
        var settings = DurableSettings.Webhook(url: "http://127.0.0.1:\(port)/feedback", secret: Self.secret)
        settings.retryBaseSeconds = 0.02
        settings.retryMaxSeconds = 0.05
        settings.batchSize = batchSize
        return settings
    }

    @Test func hmacMatchesRFC4231() {
        #expect(HMACSHA256.hex(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// docs/durable.md shows this body and signature: they stay exact.
    @Test func theDocumentedBodyAndSignatureAreExact() {
        let item = FeedbackItem(seq: 1, token: "dead" + String(repeating: "0", count: 58) + "aa", timestampMilliseconds: 1_764_400_000_000,
                                reason: "Unregistered", app: "default")
        let body = FeedbackWebhook.body([item])
        #expect(String(decoding: body, as: UTF8.self)
                == #"{"dead_tokens":[{"token":"dead0000000000000000000000000000000000000000000000000000000000aa","timestamp_ms":1764400000000,"reason":"Unregistered","app":"default"}]}"#)
        #expect(HMACSHA256.hex(key: Array("example-secret-0123456789".utf8), message: body)
                == "dcb4957c0a4876aca612af797565870d604adf20ca7c76b4784b19878e9343e9")
    }

    @Test func batchesAreSignedAndRetriedUntil2xx() async throws {
        let receiver = WebhookReceiver(failures: 2)
        let server = try HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), responder: receiver, clock: SystemClock())
        let storage = try storageWithDeadTokens(3)
        let webhook = FeedbackWebhook(settings: settings(port: server.port, batchSize: 2), storage: storage, clock: SystemClock())
        webhook.start()
        _ = await eventually(timeout: .seconds(10)) { webhook.delivered.load(ordering: .relaxed) >= 2 }
        webhook.stop()
        _ = server.shutdown(deadlineSeconds: 1)
        #expect(webhook.delivered.load(ordering: .relaxed) == 2)
        #expect(webhook.failedAttempts.load(ordering: .relaxed) == 2)
        #expect(try storage.pendingFeedback(limit: 10).isEmpty)
        let requests = receiver.received.withLock { $0 }
        #expect(requests.count == 4)
        // The failed batch is sent again unchanged.
        #expect(requests[0].body == requests[2].body)
        #expect(requests[0].header("x-pushgate-batch") == requests[2].header("x-pushgate-batch"))
        var tokens: [String] = []
        for request in requests.suffix(2) {
            #expect(request.method == "POST" && request.path == "/feedback")
            #expect(request.header("content-type") == "application/json")
            #expect(request.header("x-pushgate-signature") == "sha256=" + HMACSHA256.hex(key: Array(Self.secret.utf8), message: request.body))
            let object = try #require(try JSONParser().parse(request.body).objectValue)
            for item in object["dead_tokens"]?.arrayValue ?? [] {
                tokens.append(item.objectValue?["token"]?.stringValue ?? "")
                #expect(item.objectValue?["reason"] == .string("Unregistered"))
            }
        }
        #expect(tokens == (0..<3).map { Fixtures.token("dead", $0) })
    }

    @Test func aReceiverThatIsDownLosesNothing() async throws {
        let storage = try storageWithDeadTokens(2)
        // Nothing listens on this port (bound, then closed).
        let probe = try HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), responder: WebhookReceiver(failures: 0), clock: SystemClock())
        let port = probe.port
        _ = probe.shutdown(deadlineSeconds: 1)
        let webhook = FeedbackWebhook(settings: settings(port: port), storage: storage, clock: SystemClock())
        webhook.start()
        _ = await eventually(timeout: .seconds(10)) { webhook.failedAttempts.load(ordering: .relaxed) >= 3 }
        webhook.stop()
        #expect(webhook.failedAttempts.load(ordering: .relaxed) >= 3)
        #expect(try storage.pendingFeedback(limit: 10).count == 2)
    }

    @Test func settingsRejectBadValuesAllAtOnce() {
        let json = try? JSONParser().parse(#"{"url": "ftp://x", "secret": "short", "batchSize": 0, "extra": 1}"#)
        var reader = ConfigReader(file: "config/gateway.json")
        _ = DurableSettings(storage: nil, dispatcher: nil, webhook: json, defaultPath: "var/x.db", reader: &reader)
        let paths = reader.diagnostics.compactMap { $0.location.path?.description }
        #expect(Set(paths) == ["webhook.url", "webhook.secret", "webhook.batchSize", "webhook.extra"])
        #expect(reader.diagnostics.map(\.code).contains(.unknownKey))
    }

    @Test func settingsResolveTheStoragePathAndReadEverySection() throws {
        let storage = try JSONParser().parse(#"{"path": "../var/db.sqlite", "synchronous": "normal", "idempotencyRetentionHours": 2}"#)
        let dispatcher = try JSONParser().parse(#"{"inFlight": 64, "maxAttempts": 3, "leaseSeconds": 12}"#)
        var reader = ConfigReader(file: "config/gateway.json")
        let settings = DurableSettings(storage: storage, dispatcher: dispatcher, webhook: nil, defaultPath: "var/x.db", reader: &reader)
        #expect(reader.isValid)
        #expect(settings.storage.path == "config/../var/db.sqlite")
        #expect(!settings.storage.synchronousFull)
        #expect(settings.storage.idempotencyRetentionSeconds == 7200)
        #expect(settings.dispatcher.inFlight == 64 && settings.dispatcher.maxAttempts == 3)
        #expect(settings.dispatcher.leaseSeconds == 12)
        #expect(settings.webhook == nil)
        var defaultsReader = ConfigReader(file: "config/gateway.json")
        let defaults = DurableSettings(storage: nil, dispatcher: nil, webhook: nil, defaultPath: "../var/pushgate.db", reader: &defaultsReader)
        // Unset, the window follows the APNs connections: 800 with the shipped 2 × 100 streams.
        #expect(defaults.dispatcher.inFlight == nil)
        #expect(DurableSettings.Dispatcher.defaultInFlight(connections: 2, streamsPerConnection: 100) == 800)
        #expect(DurableSettings.Dispatcher.defaultInFlight(connections: 1, streamsPerConnection: 1) == 4)
        #expect(defaults.storage.path == "config/../var/pushgate.db" && defaults.storage.synchronousFull)
        #expect(defaults.dispatcher.leaseSeconds == 30)
        var badReader = ConfigReader(file: "config/gateway.json")
        _ = DurableSettings(storage: nil, dispatcher: try JSONParser().parse(#"{"leaseSeconds": 0}"#), webhook: nil,
                            defaultPath: "x.db", reader: &badReader)
        #expect(badReader.diagnostics.compactMap { $0.location.path?.description } == ["dispatcher.leaseSeconds"])
    }

    /// The sender lease on a shared database: read into the storage settings, and refused
    /// unless longer than one request may take (two instances would post one batch at once).
    @Test func theWebhookLeaseIsLongerThanARequest() throws {
        var reader = ConfigReader(file: "config/gateway.json")
        let hook = try JSONParser().parse(#"{"url": "https://hooks.example.com/dead", "secret": "0123456789abcdef0123", "leaseSeconds": 45}"#)
        let settings = DurableSettings(storage: nil, dispatcher: nil, webhook: hook, defaultPath: "x.db", reader: &reader)
        #expect(reader.isValid)
        #expect(settings.webhook?.leaseSeconds == 45 && settings.storage.webhookLeaseSeconds == 45)
        var defaultsReader = ConfigReader(file: "config/gateway.json")
        #expect(DurableSettings(storage: nil, dispatcher: nil, webhook: nil, defaultPath: "x.db", reader: &defaultsReader).storage.webhookLeaseSeconds == 120)
        var badReader = ConfigReader(file: "config/gateway.json")
        let short = try JSONParser().parse(#"{"url": "https://hooks.example.com/dead", "secret": "0123456789abcdef0123", "timeoutSeconds": 10, "leaseSeconds": 10}"#)
        _ = DurableSettings(storage: nil, dispatcher: nil, webhook: short, defaultPath: "x.db", reader: &badReader)
        #expect(badReader.diagnostics.map(\.code) == [.conflictingFields])
        #expect(badReader.diagnostics.compactMap { $0.location.path?.description } == ["webhook.leaseSeconds"])
        #expect(badReader.diagnostics.first?.message.contains("above webhook.timeoutSeconds (10)") == true)
    }

    @Test func theWebhookSecretAndURLComeFromTheEnvironment() {
        var reader = ConfigReader(file: "config/gateway.json", environment: [
            "PUSHGATE_WEBHOOK_URL": "https://hooks.example.com/dead", "PUSHGATE_WEBHOOK_SECRET": "0123456789abcdef0123"])
        let settings = DurableSettings(storage: nil, dispatcher: nil, webhook: nil, defaultPath: "x.db", reader: &reader)
        #expect(reader.isValid)
        #expect(settings.webhook?.url == "https://hooks.example.com/dead")
        #expect(settings.webhook?.secret == "0123456789abcdef0123")
        #expect(JSONWriter.serialize(reader.effectiveDocument).contains("\"secret\":\"(redacted)\""))
    }
}
