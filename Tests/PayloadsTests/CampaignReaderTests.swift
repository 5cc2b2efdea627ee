import DeepLinks
import Payloads
import StrictJSON
import Testing

@Suite struct DeviceTokenTests {
    @Test func stripsSpacesAndBracketsAndLowercases() throws {
        let pasted = "<8A2F 0C1D 9E4B 7F3A 2C5D 6E7F 8091 A2B3 C4D5 E6F7 0819 2A3B 4C5D 6E7F 8091 A2B3>"
        #expect(try DeviceToken.normalize(pasted).get() == "8a2f0c1d9e4b7f3a2c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3")
    }

    @Test func acceptsLongerTokensUpTo200Digits() throws {
        #expect(try DeviceToken.normalize(String(repeating: "a", count: 200)).get().count == 200)
        #expect(try DeviceToken.normalize(String(repeating: "a", count: 64)).get().count == 64)
    }

    @Test(arguments: [
        (String(repeating: "a", count: 62), "too short"),
        (String(repeating: "a", count: 65), "odd number"),
        (String(repeating: "a", count: 202), "too long"),
        (String(repeating: "a", count: 63) + "g", "not hex: 'g' at character 64"),
        ("", "empty token"),
        ("  <> ", "empty token"),
        (String(repeating: "a", count: 63) + "\u{202E}", "not hex: '\\u202e'"),
    ])
    func rejects(_ token: String, _ reason: String) {
        guard case .failure(let problem) = DeviceToken.normalize(token) else {
            Issue.record("accepted \(token)")
            return
        }
        #expect(problem.message.contains(reason), "\(problem.message)")
    }
}

@Suite struct CampaignShapeTests {
    @Test func everyProblemIsReportedAtOnceWithItsPath() {
        let json = """
        {"alert": {"titel": "Hi"}, "push_type": "loud", "priority": 7, "badge": -1, "sound": 3,
         "relevance_score": 2, "collapse_id": "\(String(repeating: "x", count: 65))",
         "data": {"aps": 1, "route": 2}, "colour": "red",
         "devices": ["\(Fixtures.tokenA)", "zz", {"token": "\(Fixtures.tokenA)"}, 7, {"variables": {}}]}
        """
        let codes = Fixtures.codes(json)
        #expect(codes == [
            "colour: unknownKey",
            "alert.titel: unknownKey",
            "push_type: invalidValue",
            "priority: invalidPriority",
            "collapse_id: collapseIdTooLong",
            "badge: invalidValue",
            "sound: wrongType",
            "relevance_score: relevanceScoreOutOfRange",
            "data.aps: reservedDataKey",
            "data.route: reservedDataKey",
            "devices[1]: invalidToken",
            "devices[2].token: duplicateDevice",
            "devices[3]: wrongType",
            "devices[4].token: missing",
            "devices[4].variables: conflictingFields",
        ])
    }

    @Test func messagesNameWhatWasExpected() {
        let problems = Fixtures.problems(#"{"alert": {"body": 5}, "devices": ["\#(Fixtures.tokenA)x"]}"#)
        #expect(problems.map(\.description) == [
            "alert.body: expected a string, found a number [wrongType]",
            "devices[0]: not hex: 'x' at character 65 [invalidToken]",
        ])
    }

    @Test func invalidJSONIsOneProblemWithLineAndColumn() {
        let problems = Fixtures.problems("{\"alert\": \"a\",\n \"alert\": \"b\"}")
        #expect(problems.count == 1)
        #expect(problems.first?.code == .invalidJSON)
        #expect(problems.first?.message.contains("line 2") == true)
        #expect(problems.first?.message.contains("duplicateKey") == true)
    }

    @Test func campaignMustBeAnObjectWithDevices() {
        #expect(Fixtures.codes("[]") == ["$: wrongType"])
        #expect(Fixtures.codes(#"{"alert": "hi"}"#) == ["devices: noDevices"])
        #expect(Fixtures.codes(#"{"alert": "hi", "devices": []}"#) == ["devices: noDevices"])
    }

    @Test func devicesMayComeLaterWhenTheSenderSaysSo() throws {
        let plan = try Fixtures.planner(requireDevices: false).plan(jsonBytes: Array(#"{"alert": "hi"}"#.utf8)).get()
        let request = try plan.request(for: Device(token: Fixtures.tokenB), apnsID: APNsID.sequential(7))
        #expect(request.path == "/3/device/" + Fixtures.tokenB)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"alert":{"body":"hi"}}}"#)
    }

    @Test func templateAndAlertConflict() {
        #expect(Fixtures.codes(#"{"template": "order_ready", "alert": "x", "devices": ["\#(Fixtures.tokenA)"]}"#)
            == ["alert: conflictingFields", "devices[0]: missingVariable", "devices[0]: missingVariable"])
        #expect(Fixtures.codes(#"{"alert": "x", "locale": "pl", "variables": {"a": "b"}, "devices": ["\#(Fixtures.tokenA)"]}"#)
            == ["locale: conflictingFields", "variables: conflictingFields"])
    }

    @Test func unsafeCharactersInHeaderBoundValuesAreRefused() {
        #expect(Fixtures.codes(#"{"alert": "x", "collapse_id": "a\r\nx-evil: 1", "devices": ["\#(Fixtures.tokenA)"]}"#)
            == ["collapse_id: invalidValue"])
    }

    @Test func dryRunIsAccepted() throws {
        let plan = try Fixtures.plan(#"{"alert": "x", "dry_run": true, "devices": ["\#(Fixtures.tokenA)"]}"#).get()
        #expect(plan.campaign.dryRun)
    }

    @Test func rejectedDeepLinkRejectsTheCampaignWithTheLinksCode() {
        let problems = Fixtures.problems(#"{"alert": "x", "deeplink": "https://evil.example/order/1", "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(problems.count == 1)
        #expect(problems.first?.code == .deeplinkRejected)
        #expect(problems.first?.linkCode == .hostNotAllowed)
        #expect(problems.first?.stableCode == "hostNotAllowed")
        #expect(problems.first?.path.description == "deeplink")
    }
}

@Suite struct ExpirationTests {
    /// The seconds, or the problem codes joined.
    private func expiration(_ value: String) -> String {
        switch Fixtures.plan(#"{"alert": "x", "expiration": \#(value), "devices": ["\#(Fixtures.tokenA)"]}"#) {
        case .success(let plan): return plan.campaign.expiration.map(String.init) ?? "none"
        case .failure(let r): return r.problems.map(\.stableCode).joined(separator: ",")
        }
    }

    @Test func unixSecondsAndRFC3339() {
        #expect(expiration("1796148000") == "1796148000")
        #expect(expiration("0") == "0")
        #expect(expiration(#""2026-12-01T18:00:00Z""#) == "1796148000")
        #expect(expiration(#""2026-12-01T19:30:00.250+01:30""#) == "1796148000")
        #expect(expiration(#""2024-02-29T00:00:00Z""#) == "1709164800")
    }

    @Test func refusesWhatIsNotATime() {
        for bad in [#""2026-12-01 18:00""#, #""2026-02-30T00:00:00Z""#, #""tomorrow""#, "-5", "1.5", "true"] {
            #expect(expiration(bad) == (bad == "true" ? "wrongType" : "invalidExpiration"), "\(bad)")
        }
    }

    @Test func headerCarriesTheSeconds() throws {
        let r = try Fixtures.firstRequest(#"{"alert": "x", "expiration": "2026-12-01T18:00:00Z", "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(r.header("apns-expiration") == "1796148000")
    }
}

@Suite struct NumberSafetyTests {
    @Test func numbersAPhoneCannotReadAsWrittenAreRefusedWithTheirPointer() {
        let json = """
        {"template": "order_ready", "variables": {"order_id": 1e999, "store_name": "x"},
         "relevance_score": 1e-999,
         "data": {"n": 1e999, "m": -1e999, "list": [1, 9007199254740993, {"deep": 0.0000e-400}], "tiny": 1e-400,
                  "ok": [9007199254740992, -9007199254740992, 1.5e300, 0, -0, 0.0, 1e20, 0e-999, 2.5]},
         "devices": ["\(Fixtures.tokenA)"]}
        """
        let codes = Fixtures.codes(json)
        #expect(codes == [
            "variables.order_id: unsafeNumber",
            "relevance_score: unsafeNumber",
            "data.n: unsafeNumber",
            "data.m: unsafeNumber",
            "data.list[1]: unsafeNumber",
            "data.tiny: unsafeNumber",
            "devices[0]: missingVariable",  // the refused variable fills nothing
        ], "\(codes)")
    }

    @Test func messagesSayWhy() {
        let problems = Fixtures.problems(#"{"alert": {"body": "x"}, "data": {"a": 12345678901234567890, "b": 1e999, "c": 1e-999}, "devices": ["\#(Fixtures.tokenA)"]}"#)
        #expect(problems.map(\.description) == [
            "data.a: the integer 12345678901234567890 is beyond ±2^53 (9007199254740992), where a double loses digits [unsafeNumber]",
            "data.b: 1e999 is beyond the range of a double [unsafeNumber]",
            "data.c: 1e-999 underflows to 0 as a double [unsafeNumber]",
        ])
    }
}
