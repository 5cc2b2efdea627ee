import APNsCore
import APNs
import Payloads
import Foundation
import StrictJSON
import Testing
import TestSupport
import Crypto
import CurlClient
import Timing

/// The channel management client against the fake's management API: Apple's paths,
/// headers and answers, the same provider token as pushes, and Apple's errors.
@Suite struct ChannelManagementTests {
    static func client(_ fake: FakeAPNs, bundleId: String = "com.example.app",
                       tokens: ProviderTokenManager? = nil) throws -> (ChannelManagementClient, ProviderTokenManager) {
        let manager = try tokens ?? ProviderTokenManager(key: SigningKey.load(file: FakeAPNs.keyFile), teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: SystemClock())
        let client = ChannelManagementClient(bundleId: bundleId, baseURL: fake.url, tokens: manager,
                                             transport: CurlOneShot(caFile: fake.caFile, timeoutMilliseconds: 5_000),
                                             retry: RetryPolicy(maxAttempts: 3, baseBackoffMilliseconds: 10, maxBackoffMilliseconds: 50), clock: SystemClock())
        return (client, manager)
    }

    @Test func createShowListDelete() async throws {
        let fake = try FakeAPNs(script: [:])
        defer { fake.stop() }
        let (client, tokens) = try Self.client(fake)

        let created = await client.perform(.create(.mostRecentMessageStored))
        guard case .success(.created(let channel)) = created.outcome else { Issue.record("\(created)"); return }
        #expect(BroadcastChannelID.problem(with: channel.id) == nil && channel.storagePolicy == .mostRecentMessageStored)
        #expect(created.requestId != nil)

        let other = await client.perform(.create(.noMessageStored))
        guard case .success(.created(let second)) = other.outcome else { Issue.record("\(other)"); return }

        let shown = await client.perform(.read(channelId: second.id))
        #expect(shown.outcome == .success(.channel(BroadcastChannel(id: second.id, storagePolicy: .noMessageStored, pushType: "LiveActivity"))))

        let listed = await client.perform(.list)
        #expect(listed.outcome == .success(.channels([channel.id, second.id].sorted())))

        let deleted = await client.perform(.delete(channelId: channel.id))
        #expect(deleted.outcome == .success(.deleted(channel.id)))
        #expect(await client.perform(.list).outcome == .success(.channels([second.id])))

        // What went over the wire: Apple's methods and paths, the channel id header, the
        // request id, one provider token for all of it.
        let log = fake.log()
        #expect(log.map { "\($0.string("method") ?? "") \($0.string("path") ?? "") \($0.int("status") ?? 0)" } == [
            "POST /1/apps/com.example.app/channels 201", "POST /1/apps/com.example.app/channels 201",
            "GET /1/apps/com.example.app/channels 200", "GET /1/apps/com.example.app/all-channels 200",
            "DELETE /1/apps/com.example.app/channels 204", "GET /1/apps/com.example.app/all-channels 200",
        ])
        #expect(log[2].string("channel") == second.id && log[4].string("channel") == channel.id)
        #expect(log.allSatisfy { $0["headers"]?.arrayValue?.contains(.string("apns-request-id")) == true })
        #expect(fake.tokensSeen().count == 1 && tokens.mintedCount == 1)
    }

    @Test func applesErrorsComeBackWithTheirReasons() async throws {
        let fake = try FakeAPNs(script: ["channelLimit": 1, "broadcastDisabled": ["com.example.off"]])
        defer { fake.stop() }
        let (client, tokens) = try Self.client(fake)
        let unknown = await client.perform(.read(channelId: "dW5rbm93bg=="))
        #expect(unknown.outcome == .failure(.refused(status: 400, reason: .channelNotRegistered)))
        #expect(await client.perform(.delete(channelId: "dW5rbm93bg==")).outcome == .failure(.refused(status: 400, reason: .channelNotRegistered)))
        #expect(await client.perform(.read(channelId: "not base64!")).outcome == .failure(.refused(status: 400, reason: .badChannelId)))
        guard case .success = await client.perform(.create(.noMessageStored)).outcome else { Issue.record("first create"); return }
        #expect(await client.perform(.create(.noMessageStored)).outcome == .failure(.refused(status: 400, reason: .cannotCreateChannelConfig)))
        let (off, _) = try Self.client(fake, bundleId: "com.example.off", tokens: tokens)
        #expect(await off.perform(.list).outcome == .failure(.refused(status: 400, reason: .featureNotEnabled)))
        let failure = ChannelFailure.refused(status: 400, reason: .channelNotRegistered)
        #expect(failure.code == "ChannelNotRegistered" && failure.message.contains("sandbox and production"))
    }

    @Test func aBundleTheKeyMayNotPushToIsTopicDisallowed() async throws {
        let fake = try FakeAPNsServer(keys: [FakeAPNsServer.Key(teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, keyFile: FakeAPNs.keyFile,
                                                                topics: ["com.example.app"])])
        defer { fake.stop() }
        let (mine, tokens) = try Self.client(fake)
        guard case .success(.channels([])) = await mine.perform(.list).outcome else { Issue.record("own bundle"); return }
        let (theirs, _) = try Self.client(fake, bundleId: "com.example.other", tokens: tokens)
        #expect(await theirs.perform(.list).outcome == .failure(.refused(status: 400, reason: .topicDisallowed)))
    }

    @Test func aRefusedKeyIsHeldForManagementToo() async throws {
        let fake = try FakeAPNs(script: ["keyProblem": "InvalidProviderToken"])
        defer { fake.stop() }
        let (client, tokens) = try Self.client(fake)
        #expect(await client.perform(.list).outcome == .failure(.refused(status: 403, reason: .invalidProviderToken)))
        #expect(tokens.hold() != nil)
        // Held: the next request does not reach APNs.
        guard case .failure(.transport(let failure)) = await client.perform(.create(.noMessageStored)).outcome else {
            Issue.record("not held"); return
        }
        #expect(failure.code == .keyStopped && failure.message.contains("InvalidProviderToken"))
        #expect(fake.log().count == 1)
    }

    @Test func transientAnswersAreRetriedExceptForACreate() async throws {
        let fake = try FakeAPNs(script: ["requests": ["1": ["status": 500, "reason": "InternalServerError"],
                                                      "3": ["status": 503, "reason": "ServiceUnavailable"]]])
        defer { fake.stop() }
        let (client, _) = try Self.client(fake)
        #expect(await client.perform(.list).outcome == .success(.channels([])))
        #expect(await client.perform(.create(.noMessageStored)).outcome == .failure(.refused(status: 503, reason: .serviceUnavailable)))
        #expect(fake.log().count == 3)
    }

    @Test func channelIdsAndPolicies() {
        #expect(BroadcastChannelID.problem(with: "dHN0LXNyY2gtY2hubA==") == nil)
        #expect(BroadcastChannelID.problem(with: "ab+/cd==") == nil)
        for bad in ["", "abc", "ab=c", "a===", "ab-_", String(repeating: "A", count: 260)] {
            #expect(BroadcastChannelID.problem(with: bad) != nil, "\(bad)")
        }
        #expect(ChannelStoragePolicy(text: "0") == .noMessageStored && ChannelStoragePolicy(text: "most-recent-message-stored") == .mostRecentMessageStored)
        #expect(ChannelStoragePolicy(text: "2") == nil && ChannelStoragePolicy(text: "yes") == nil)
        #expect(String(decoding: ChannelOperation.create(.mostRecentMessageStored).body, as: UTF8.self)
                == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        #expect(APNsEnvironment.sandbox.manageBaseURL == "https://api-manage-broadcast.sandbox.push.apple.com:2195")
        #expect(APNsEnvironment.production.manageBaseURL == "https://api-manage-broadcast.push.apple.com:2196")
    }
}
