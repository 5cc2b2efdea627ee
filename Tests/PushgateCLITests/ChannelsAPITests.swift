import Foundation
import StrictJSON
import Testing
import TestSupport

/// `/v1/channels` against the fake's management API through `serve`: create, list, show,
/// delete, Apple's refusal, and the checks made before anything is sent.
@Suite struct ChannelsAPITests {
    static func body(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func object(_ bytes: [UInt8]) -> JSONObject? { (try? JSONParser().parse(bytes))?.objectValue }
    static func firstError(_ bytes: [UInt8]) -> JSONObject? { object(bytes)?["errors"]?.arrayValue?.first?.objectValue }

    @Test func createListShowDelete() throws {
        let fake = try FakeAPNsServer()
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 10,
                                            apns: #", "manageURL": "\#(fake.url)""#)
        let server = try ServeProcess(config: config)
        defer { _ = server.terminate() }

        let created = try #require(server.request("POST", "/v1/channels", json: Self.body(#"{"message_storage_policy": 1}"#)))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let answer = try #require(Self.object(created.body))
        let id = try #require(answer.string("channel_id"))
        #expect(answer.int("message_storage_policy") == 1 && answer.string("push_type") == "LiveActivity"
                && answer.string("environment") == "sandbox" && answer.string("app") == "default")
        // In a path the id is base64url (`/` cannot stand in a segment); `+` and `=` may also be encoded.
        let inPath = id.replacing("/", with: "_").replacing("+", with: "%2B").replacing("=", with: "%3D")

        let listed = try #require(server.object("GET", "/v1/channels"))
        #expect(listed["channels"] == .array([.string(id)]), "\(listed)")
        let shown = try #require(server.request("GET", "/v1/apps/default/channels/\(inPath)?environment=sandbox"))
        #expect(shown.status == 200 && Self.object(shown.body)?.string("channel_id") == id, "\(inPath) \(shown.status) \(String(decoding: shown.body, as: UTF8.self))")

        let deleted = try #require(server.request("DELETE", "/v1/channels/\(inPath)"))
        #expect(deleted.status == 200 && Self.object(deleted.body)?["deleted"] == .bool(true))
        let gone = try #require(server.request("GET", "/v1/channels/\(inPath)"))
        #expect(gone.status == 404)
        #expect(Self.firstError(gone.body)?.string("code") == "ChannelNotRegistered"
                && Self.firstError(gone.body)?.string("parameter") == "channel", "\(String(decoding: gone.body, as: UTF8.self))")

        // Checked here, never sent: a bad id, a bad policy, an environment the app lacks.
        let before = fake.log().count
        let bad = try #require(server.request("GET", "/v1/channels/abc"))
        #expect(bad.status == 422 && Self.firstError(bad.body)?.string("code") == "invalidChannelId")
        let policy = try #require(server.request("POST", "/v1/channels", json: Self.body(#"{"message_storage_policy": 2}"#)))
        #expect(policy.status == 422 && Self.firstError(policy.body)?.string("pointer") == "/message_storage_policy")
        let missing = try #require(server.request("POST", "/v1/channels", json: Self.body(#"{"colour": "red"}"#)))
        #expect(missing.status == 422 && Self.firstError(missing.body)?.string("code") == "unknownKey")
        let environment = try #require(server.request("GET", "/v1/channels?environment=production"))
        #expect(environment.status == 422 && Self.firstError(environment.body)?.string("parameter") == "environment")
        #expect(fake.log().count == before)
    }

    @Test func applesRefusalIs502AndADryRunIs409() throws {
        let fake = try FakeAPNsServer(scriptJSON: #"{"broadcastDisabled": ["com.example.shop"]}"#)
        defer { fake.stop() }
        let config = try fake.gatewayConfig(database: fake.directory.appendingPathComponent("gateway.db").path, inFlight: 10,
                                            apns: #", "manageURL": "\#(fake.url)""#)
        let server = try ServeProcess(config: config)
        defer { _ = server.terminate() }
        let refused = try #require(server.request("GET", "/v1/channels"))
        #expect(refused.status == 502 && Self.object(refused.body)?.string("code") == "apnsRefused")
        #expect(Self.firstError(refused.body)?.string("code") == "FeatureNotEnabled")

        let dry = try ServeProcess(config: ServeProcess.dryRunConfig("dry", in: fake.directory, templates: TestPaths.packageRoot.appendingPathComponent("Templates").path, keys: "[]"))
        defer { _ = dry.terminate() }
        let unavailable = try #require(dry.request("POST", "/v1/channels", json: Self.body(#"{"message_storage_policy": 0}"#)))
        #expect(unavailable.status == 409 && Self.object(unavailable.body)?.string("code") == "channelsUnavailable")
    }
}
