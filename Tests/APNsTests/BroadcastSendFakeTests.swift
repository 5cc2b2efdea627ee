import APNs
import Foundation
import Payloads
import StrictJSON
import Testing
import TestSupport

/// The fake's broadcast send path (`POST /4/broadcasts/apps/<bundle id>`), reached through
/// the push transport with a channel created through the management API: Apple's checks
/// on a broadcast (channel, push type, a no-message-stored channel's expiration).
@Suite struct BroadcastSendFakeTests {
    static func broadcast(channel: String?, pushType: String? = "liveactivity", expiration: String = "0",
                          body: String = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#) -> APNsRequest {
        var headers = [HTTPHeader("apns-priority", "10"), HTTPHeader("apns-expiration", expiration)]
        if let channel { headers.append(HTTPHeader("apns-channel-id", channel)) }
        if let pushType { headers.append(HTTPHeader("apns-push-type", pushType)) }
        return APNsRequest(deviceToken: "", path: "/4/broadcasts/apps/com.example.app", headers: headers, body: Array(body.utf8))
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
        guard case .delivered = await client.send(Self.broadcast(channel: stored.id, expiration: "1900000000")) else {
            Issue.record("broadcast on a storing channel"); return
        }
        guard case .delivered = await client.send(Self.broadcast(channel: unstored.id)) else { Issue.record("broadcast"); return }
        let cases: [(APNsRequest, APNsReason)] = [
            (Self.broadcast(channel: unstored.id, expiration: "1900000000"), .badExpirationDate),
            (Self.broadcast(channel: nil), .missingChannelId),
            (Self.broadcast(channel: "dW5rbm93bg=="), .channelNotRegistered),
            (Self.broadcast(channel: stored.id, pushType: nil), .missingPushType),
            (Self.broadcast(channel: stored.id, pushType: "alert"), .invalidPushType),
        ]
        for (request, reason) in cases {
            guard case .failed(let status, let answered, _) = await client.send(request) else { Issue.record("\(reason)"); continue }
            #expect(status == 400 && answered == reason)
        }
        // One provider token for management and broadcasts alike.
        #expect(fake.tokensSeen().count == 1 && tokens.mintedCount == 1)
        #expect(fake.log().filter { $0.string("path") == "/4/broadcasts/apps/com.example.app" }.count == 7)
    }
}
