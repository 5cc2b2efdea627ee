import APNsCore
import APNs
import CurlClient
import Foundation
import Payloads
import StrictJSON
import Testing
import TestSupport

/// The fake's broadcast send path (`POST /4/broadcasts/apps/<bundle id>`), reached through
/// the push transport with a channel created through the management API: Apple's checks
/// on a broadcast (channel, push type, a no-message-stored channel's expiration).
@Suite struct BroadcastSendFakeTests {
    static let body = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#

    static func broadcast(channel: String?, pushType: PushType = .liveactivity, expiration: Int64 = 0) -> APNsRequest {
        APNsRequest(deviceToken: channel ?? "", path: "/4/broadcasts/apps/com.example.app", pushType: pushType, topic: nil,
                    channel: channel, priority: 10, expiration: expiration, body: Array(body.utf8))
    }

    @Test func aBroadcastToAChannelIsAcceptedAndApplesRulesAreChecked() async throws {
        let fake = try FakeAPNs(script: [:])
        defer { fake.stop() }
        let (client, tokens, transport) = try makeClient(fake)
        defer { transport.shutdown() }
        let (manager, _) = try ChannelManagementTests.client(fake, tokens: tokens)
        guard case .success(.created(let stored)) = await manager.perform(.create(.mostRecentMessageStored)).outcome,
              case .success(.created(let unstored)) = await manager.perform(.create(.noMessageStored)).outcome else {
            Issue.record("create"); return
        }
        guard case .delivered = await client.send(Self.broadcast(channel: stored.id, expiration: 1900000000)) else {
            Issue.record("broadcast on a storing channel"); return
        }
        guard case .delivered = await client.send(Self.broadcast(channel: unstored.id)) else { Issue.record("broadcast"); return }
        let cases: [(APNsRequest, APNsReason)] = [
            (Self.broadcast(channel: unstored.id, expiration: 1900000000), .badExpirationDate),
            (Self.broadcast(channel: nil), .missingChannelId),
            (Self.broadcast(channel: "dW5rbm93bg=="), .channelNotRegistered),
            (Self.broadcast(channel: stored.id, pushType: .alert), .invalidPushType),
        ]
        for (request, reason) in cases {
            guard case .failed(let status, let answered, _) = await client.send(request) else { Issue.record("\(reason)"); continue }
            #expect(status == 400 && answered == reason)
        }
        // A typed request always has a push type: one without goes straight to the transport.
        let untyped = TransportRequest(path: "/4/broadcasts/apps/com.example.app", authorization: try tokens.currentToken().bearerValue,
                                       headers: [HeaderField("apns-priority", "10"), HeaderField("apns-expiration", "0"),
                                                 HeaderField("apns-channel-id", stored.id)],
                                       body: Array(Self.body.utf8))
        guard case .response(let answer) = await transport.send(untyped) else { Issue.record("no answer"); return }
        #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self).contains("MissingPushType"))
        // One provider token for management and broadcasts alike.
        #expect(fake.tokensSeen().count == 1 && tokens.mintedCount == 1)
        #expect(fake.log().filter { $0.string("path") == "/4/broadcasts/apps/com.example.app" }.count == 7)
    }
}
