import Foundation
import Payloads
import StrictJSON
import Testing
import TestSupport
@testable import Gateway

/// `guard.confirmAbove`: a campaign to more devices must carry `confirm_devices` equal to
/// its device count, in both body forms; nothing is stored or sent otherwise.
@Suite struct SendGuardTests {
    static let tokens = (0..<5).map { Fixtures.token("c0", $0) }

    func ndjson(_ header: String, _ tokens: [String]) -> String {
        ([header] + tokens).joined(separator: "\n") + "\n"
    }

    @Test func withoutConfirmationABigCampaignIs422NamingBothNumbers() throws {
        let gateway = try LiveGateway(confirmAbove: 4)
        let response = try #require(gateway.post(Self.tokens))
        #expect(response.status == 422)
        let problem = try gateway.object(response)
        #expect(problem["code"] == .string("confirmationRequired"))
        let detail = try #require(problem["detail"]?.stringValue)
        #expect(detail.contains("5 devices") && detail.contains("guard.confirmAbove (4)"), "\(detail)")
        let entry = try #require(problem["errors"]?.arrayValue?.first?.objectValue)
        #expect(entry["pointer"] == .string("/confirm_devices"))
        #expect(entry["code"] == .string("confirmationRequired"))
        #expect(try gateway.object(gateway.request("GET", "/v1/campaigns"))["campaigns"] == .array([]), "nothing stored")
        #expect(gateway.sender.sent.withLock { $0.isEmpty })
    }

    @Test func theRightNumberIsAcceptedAndAWrongOneIs422() async throws {
        let gateway = try LiveGateway(confirmAbove: 4)
        let wrong = try #require(gateway.post(Self.tokens, extra: #","confirm_devices":4"#))
        #expect(wrong.status == 422)
        let detail = try #require(try gateway.object(wrong)["detail"]?.stringValue)
        #expect(detail.contains("confirm_devices is 4") && detail.contains("5 devices"), "\(detail)")

        let right = try #require(gateway.post(Self.tokens, extra: #","confirm_devices":5"#))
        #expect(right.status == 202)
        let id = try #require(try gateway.object(right)["id"]?.stringValue)
        _ = try await gateway.waitForCompletion(id)
        #expect(gateway.sender.sent.withLock { $0.count } == 5)
    }

    @Test func aGivenConfirmationMustBeRightEvenBelowTheLimit() throws {
        let gateway = try LiveGateway(confirmAbove: 100)
        let wrong = try #require(gateway.post(Array(Self.tokens.prefix(2)), extra: #","confirm_devices":3"#))
        #expect(wrong.status == 422)
        #expect(try gateway.object(wrong)["code"] == .string("confirmationRequired"))
        #expect(gateway.post(Array(Self.tokens.prefix(2)))?.status == 202)
    }

    @Test func ndjsonCampaignsCountTheirLines() throws {
        let gateway = try LiveGateway(confirmAbove: 4)
        let header = #"{"alert":{"body":"Sale"}}"#
        let headers = [("Content-Type", "application/x-ndjson")]
        let refused = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns", headers: headers,
                                             body: Array(ndjson(header, Self.tokens).utf8))
        #expect(refused?.status == 422)
        #expect(try gateway.object(refused)["code"] == .string("confirmationRequired"))
        let confirmed = RawHTTPClient.exchange(port: gateway.port, method: "POST", path: "/v1/campaigns", headers: headers,
                                               body: Array(ndjson(#"{"alert":{"body":"Sale"},"confirm_devices":5}"#, Self.tokens).utf8))
        #expect(confirmed?.status == 202)
    }

    @Test func confirmDevicesMustBeACount() throws {
        let gateway = try LiveGateway()
        for (value, code) in [("0", "invalidValue"), ("2.5", "invalidValue"), (#""5""#, "wrongType")] {
            let response = try #require(gateway.post(Array(Self.tokens.prefix(1)), extra: #","confirm_devices":"# + value))
            #expect(response.status == 422, "\(value)")
            let entry = try gateway.object(response)["errors"]?.arrayValue?.first?.objectValue
            #expect(entry?["code"] == .string(code), "\(value)")
            #expect(entry?["pointer"] == .string("/confirm_devices"))
        }
    }

    @Test func theRuleNamesBothNumbers() {
        let rule = SendGuard(confirmAbove: 10_000)
        #expect(rule.problem(devices: 10_000, confirmed: nil, at: .none) == nil)
        let over = rule.problem(devices: 10_001, confirmed: nil, at: .none)
        #expect(over?.message.contains("10001") == true && over?.message.contains("10000") == true)
        #expect(rule.problem(devices: 10_001, confirmed: 10_001, at: .none) == nil)
        #expect(rule.problem(devices: 10_001, confirmed: 10_000, at: .none)?.code == .confirmationRequired)
    }
}
