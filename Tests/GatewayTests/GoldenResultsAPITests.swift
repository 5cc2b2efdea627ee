import APNsCore
import APNs
import Foundation
import HTTPServer
import Payloads
import PostgresStorage
import Storage
import StrictJSON
import Testing
import TestSupport
import Timing
@testable import Gateway
@testable import Outbox
import Crypto

/// The API's JSON for campaigns with every kind of per-device outcome (`GoldenCampaigns`):
/// `GET /v1/campaigns/{id}` (the per-device results, paged, `?state=`), `/reasons` and the
/// list, on both backends, against Tests/StorageTests/Fixtures/golden/api-*.txt written by
/// the code before segments. Regenerate (only on purpose) with `PUSHGATE_GOLDEN_WRITE=1`.
@Suite struct GoldenResultsAPITests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static func storage(_ backend: Backend) throws -> any CampaignStorage {
        switch backend {
        case .sqlite: try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        case .postgres: try PostgresCampaignStorage(options: .init(url: try PostgresCluster.shared().newDatabaseURL(), poolSize: 2,
                                                                    instance: "golden-host/1/0", clock: SystemClock()))
        }
    }

    /// What is asked of the API at each moment: every campaign's results and reasons, and
    /// the pages and filters that cross `gold-prod`'s first segment's end.
    static func paths(_ moment: GoldenCampaigns.Moment) -> [String] {
        var paths = ["/v1/campaigns", "/v1/campaigns?limit=3", "/v1/campaigns?app=shop&status=paused"]
        for id in GoldenCampaigns.ids {
            let base = "/v1/campaigns/\(id)"
            if id == "gold-prod" {
                paths += moment == .final ? [base + "?per_page=1000", base + "?page=2&per_page=1000"] : [base + "?per_page=40"]
                paths += [base, base + "?page=52&per_page=20", base + "?page=103&per_page=10", base + "?page=3&per_page=1000",
                          base + "?state=delivered&per_page=7&page=146", base + "?state=failed,unregistered", base + "?state=retrying",
                          base + "?state=in-flight,pending&per_page=5", base + "?state=skipped", base + "?state=delivered&per_page=3&page=2"]
            } else {
                paths += [base + "?per_page=1000", base + "?state=cancelled,expired&per_page=5&page=2", base + "?state=dry-run",
                          base + "?state=pending,retrying,in-flight"]
            }
            paths += [base + "/reasons", base + "/reasons?state=delivered,failed,unregistered,retrying,skipped,cancelled,expired,dry-run"]
        }
        return paths
    }

    @Test(arguments: Backend.allCases) func theAPIsPerDeviceResultsMatchTheGolden(_ backend: Backend) throws {
        let storage = try Self.storage(backend)
        let clock = ManualClock(wallSeconds: GoldenCampaigns.t0)
        let table = try Fixtures.routeTable()
        let planner = CampaignPlanner(bundleId: table.app.bundleId, links: table, templates: try Fixtures.templates(), clock: SystemClock())
        let tokens = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: SystemClock())
        let components = GatewayComponents(
            apps: AppDirectory([GatewayApp(name: "shop", routes: table, planner: planner, environment: .production,
                                           environments: [.production, .sandbox], teamId: nil, keyId: nil)]),
            sender: ScriptedSender(), dryRunSender: DryRunSender(tokens: tokens, baseURL: "https://api.sandbox.push.apple.com"),
            configuredIsDryRun: false, readiness: [], sendGuard: SendGuard())
        var settings = ServerSettings()
        settings.http = HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20)
        let metrics = Metrics()
        // Never started: the scenario alone claims and records.
        let dispatcher = Dispatcher(storage: storage, sender: components.sender, dryRunSender: components.dryRunSender, metrics: metrics,
                                    clock: clock)
        let campaigns = DurableCampaigns(storage: storage, dispatcher: dispatcher, idempotencyRetentionSeconds: 3600, clock: clock)
        let service = try GatewayAPI.makeService(components, settings: settings, metrics: metrics, log: RequestLog(fd: -1, clock: SystemClock()),
                                                 campaigns: campaigns, clock: clock)
        let server = try HTTPServer(configuration: settings.http, responder: service, clock: SystemClock())
        defer { _ = server.shutdown(deadlineSeconds: 1) }

        try GoldenCampaigns.run(storage) { moment, now in
            clock.advance(seconds: now - clock.wallSeconds())
            var text = ""
            for path in Self.paths(moment) {
                let response = RawHTTPClient.exchange(port: server.port, method: "GET", path: path, headers: [], body: [])
                text += "GET \(path) \(response.map { String($0.status) } ?? "no answer") \(response?.header("content-type") ?? "-")\n"
                text += String(decoding: response?.body ?? [], as: UTF8.self)
                if !text.hasSuffix("\n") { text += "\n" }
            }
            if let difference = GoldenText.compare(text, golden: "api-\(moment.rawValue).txt") {
                Issue.record("\(backend): \(difference)")
            }
        }
    }
}

/// The golden scenario records what the dispatcher itself records for APNs' answers: each
/// scripted outcome of `GoldenCampaigns` against `Dispatcher.outcome` for the answer it
/// stands for (a retry's time where the answer fixes it: Retry-After).
@Suite struct GoldenOutcomesTests {
    @Test func eachScriptedOutcomeIsWhatTheDispatcherRecordsForItsAnswer() throws {
        let now = GoldenCampaigns.t0 + 2
        let clock = ManualClock(wallSeconds: now)
        let storage = try SQLiteCampaignStorage(path: temporaryDatabasePath(), options: .init(synchronousFull: false))
        let dispatcher = Dispatcher(storage: storage, sender: ScriptedSender(), dryRunSender: ScriptedSender(), metrics: Metrics(),
                                    options: .init(maxAttempts: GoldenCampaigns.maxAttempts), clock: clock)
        let route = CampaignRoute(app: "shop", environment: "production", dryRun: false)
        func derived(_ id: String, _ index: Int) -> String { CampaignMessage.apnsID(prefix: GoldenCampaigns.prefixes[id] ?? "", index: index) }
        let answers: [(String, Int, Int, DeliveryResult, String?)] = [
            ("gold-prod", 0, 1, .delivered(apnsId: derived("gold-prod", 0)), nil),
            ("gold-prod", 1, 1, .failed(status: 429, reason: .tooManyRequests), nil),
            ("gold-prod", 2, 1, .failed(status: 503, reason: .serviceUnavailable), nil),
            ("gold-prod", 2, GoldenCampaigns.maxAttempts, .failed(status: 503, reason: .serviceUnavailable), nil),
            ("gold-prod", 3, 1, .delivered(apnsId: "5F3B7C1E-9D2A-4B6C-8E0F-1A2B3C4D5E6F"), nil),
            ("gold-prod", 4, 1, .transportFailed(TransportFailure(.timeout, "no answer")), nil),
            ("gold-prod", 10, 1, .failed(status: 400, reason: .deviceTokenNotForTopic), nil),
            ("gold-prod", 1023, 1, .unregistered(reason: .unregistered, timestampMilliseconds: 1_767_000_000_000 + 1023), nil),
            ("gold-prod", 1024, 1, .failed(status: 400, reason: .badDeviceToken), nil),
            ("gold-prod", 1025, 1, .failed(status: 503, reason: .serviceUnavailable, retryAfterSeconds: 60), nil),
            ("gold-sandbox", 0, 1, .delivered(apnsId: derived("gold-sandbox", 0), uniqueId: "9a6b9ac6-8f1e-4c2a-9d3b-2f1e0c9b8a70"), nil),
            ("gold-sandbox", 3, 1, .unregistered(reason: .unregistered, timestampMilliseconds: 1_767_100_000_000), nil),
            ("gold-expire", 3, 1, .failed(status: 500, reason: .internalServerError), nil),
            ("gold-paused", 5, 1, .failed(status: 429, reason: .tooManyRequests), nil),
            ("gold-channel", 0, 1, .delivered(apnsId: "ignored"), "8c3b2a19-0f4e-4d5c-9b6a-7e8f9a0b1c2d"),
        ]
        func shown(_ u: DeliveryUpdate) -> String {
            "\(u.state.name) \(u.status.map(String.init) ?? "-") \(u.reason ?? "-") \(u.apnsID ?? "-") \(u.apnsUniqueID ?? "-") "
                + "\(u.timestampMilliseconds.map(String.init) ?? "-") refund=\(u.refundAttempt) retries=\(u.nextAttemptAt != nil)"
        }
        for (id, index, attempt, result, requestID) in answers {
            let claim = ClaimedDelivery(campaign: 1, index: index, token: "t", body: nil, attempt: attempt, lease: 7)
            let scripted = try #require(GoldenCampaigns.outcome(id, claim, now: now))
            let recorded = dispatcher.outcome(of: result, for: claim, route: route, requestID: requestID)
            #expect(shown(scripted) == shown(recorded), "\(id) #\(index) attempt \(attempt)")
            #expect(recorded.lease == scripted.lease && recorded.index == scripted.index)
            if case .failed(_, _, let retryAfter?) = result {
                #expect(scripted.nextAttemptAt == recorded.nextAttemptAt && recorded.nextAttemptAt == now + Double(retryAfter))
            }
        }
        // A device withdrawn before it was written (a cancel, a pause) is given back as the dispatcher gives it back.
        let claim = ClaimedDelivery(campaign: 1, index: 3, token: "t", body: nil, attempt: 1, lease: 7)
        let back = Dispatcher.givenBack(claim)
        let scripted = try #require(GoldenCampaigns.outcome("gold-cancel", claim, now: now))
        #expect(shown(back) == shown(scripted) && back.refundAttempt)
    }
}
