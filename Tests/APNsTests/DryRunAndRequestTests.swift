import APNsCore
import APNs
import Payloads
import Testing
import Crypto
import CurlClient
import Timing

@Suite struct DryRunAndRequestTests {
    @Test func dryRunSignsButSendsNothingAndRedactsTheToken() async throws {
        let config = APNsConfiguration(dryRun: true)
        let fleet = try APNsFleet(apps: [.init(name: "app", configuration: config)], clock: SystemClock())
        #expect(fleet.transports.isEmpty)
        #expect(fleet.notices.contains { $0.contains("ephemeral") })
        let results = await sendAll(fleet.sender(app: "app", configuration: config), (0..<50).map { TestRequests.alert($0) })
        #expect(fleet.tokens.first?.mintedCount == 1)
        for (index, result) in results.enumerated() {
            guard case .dryRun(let request) = result else { Issue.record("got \(result)"); continue }
            #expect(request.url == "https://api.sandbox.push.apple.com/3/device/" + TestRequests.token(index))
            #expect(request.headers.first?.name == "authorization")
            #expect(request.headers.first?.value.contains("redacted") == true)
            #expect(request.headers.first?.value.contains(".") == false, "no JWT")
            #expect(request.body == TestRequests.alert(index).body)
        }
    }

    @Test func topicOverrideReplacesTheCampaignsTopic() async throws {
        var config = APNsConfiguration(dryRun: true)
        config.topic = "com.example.other"
        let fleet = try APNsFleet(apps: [.init(name: "app", configuration: config)], clock: SystemClock())
        guard case .dryRun(let request) = await fleet.sender(app: "app", configuration: config).send(TestRequests.alert(1)) else { Issue.record("not a dry run"); return }
        #expect(request.headers.filter { $0.name == "apns-topic" }.map(\.value) == ["com.example.other"])
    }

    @Test func theFakeChecksHeadersAndBodyAsAppleDoes() async throws {
        let fake = try FakeAPNs()
        let (client, _, _) = try makeClient(fake)
        var badPriority = TestRequests.alert(1)
        badPriority.pushType = .background  // at priority 10
        #expect(await client.send(badPriority) == .failed(status: 400, reason: .badPriority))
        let big = TestRequests.alert(2, body: #"{"aps":{"alert":""# + String(repeating: "x", count: 4100) + #""}}"#)
        #expect(await client.send(big) == .failed(status: 413, reason: .payloadTooLarge))
        var noTopic = TestRequests.alert(3)
        noTopic.topic = nil
        #expect(await client.send(noTopic) == .failed(status: 400, reason: .missingTopic))
        #expect(await client.send(TestRequests.alert(4, body: "")) == .failed(status: 400, reason: .payloadEmpty))
    }

    @Test func aTokenSignedWithAnotherKeyIsRefusedByTheFake() async throws {
        let fake = try FakeAPNs()
        let other = try SigningKey.ephemeral()
        let tokens = ProviderTokenManager(key: other, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let transport = try CurlHTTP2Transport(settings: TransportSettings(baseURL: fake.url, caFile: fake.caFile), clock: SystemClock())
        let client = APNsClient(transport: transport, tokens: tokens, retry: RetryPolicy(), clock: SystemClock())
        let result = await client.send(TestRequests.alert(1))
        guard case .transportFailed(let failure) = result, failure.code == .keyStopped else {
            Issue.record("a refused key stops the key: \(result)")
            return
        }
        #expect(failure.message.contains("403 InvalidProviderToken") && tokens.hold()?.reason == .invalidProviderToken)
    }
}
