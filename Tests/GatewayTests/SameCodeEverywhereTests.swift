import Foundation
import StrictJSON
import Testing
import TestSupport
@testable import Gateway

/// The same mistake gets the same code on every endpoint, and a problem's top-level code
/// names its kind whatever the number of errors.
@Suite struct SameCodeEverywhereTests {
    static let token = TestTokens.device

    /// (status, top-level code, each error's code and location member) of one answer.
    func answer(_ api: any APIClient, _ method: String, _ path: String, query: [(name: String, value: String)] = [], json: String? = nil)
        throws -> (Int, String?, [(String?, String?)])
    {
        let response = try api.call(method, path, query: query, json: json)
        let problem = try response.object()
        let errors = (problem["errors"]?.arrayValue ?? []).compactMap(\.objectValue).map { error in
            (error["code"]?.stringValue, error.members.first?.key)
        }
        return (response.status, problem["code"]?.stringValue, errors)
    }

    @Test(arguments: Transport.allCases) func unknownKeysWrongTypesAndMissingFieldsInEveryBody(_ transport: Transport) throws {
        let gateway = try LiveGateway()
        let api = gateway.client(transport)
        let bodies: [(String, String, String, String)] = [
            // endpoint, body with an unknown key, body with a wrong type, body with nothing required
            ("/v1/links/check", #"{"link":"https://example.com/profile","linx":1}"#, #"{"link":42}"#, #"{}"#),
            ("/v1/notifications/preview", #"{"alert":{"body":"x"},"devices":["\#(Self.token)"],"colour":1}"#,
             #"{"alert":{"body":"x"},"devices":["\#(Self.token)"],"badge":"one"}"#, #"{"devices":["\#(Self.token)"],"alert":{}}"#),
            ("/v1/campaigns", #"{"alert":{"body":"x"},"devices":["\#(Self.token)"],"colour":1}"#,
             #"{"alert":{"body":"x"},"devices":["\#(Self.token)"],"badge":"one"}"#, #"{"alert":{"body":"x"}}"#),
        ]
        for (path, unknown, wrongType, _) in bodies {
            let (status, code, errors) = try answer(api, "POST", path, json: unknown)
            #expect(status == 422, "\(path)")
            #expect(code == "validationFailed", "\(path)")
            #expect(errors.map(\.0) == ["unknownKey"], "\(path)")
            #expect(errors.map(\.1) == ["pointer"], "\(path)")
            let (typeStatus, typeCode, typeErrors) = try answer(api, "POST", path, json: wrongType)
            #expect(typeStatus == 422 && typeCode == "validationFailed", "\(path)")
            #expect(typeErrors.map(\.0) == ["wrongType"], "\(path)")
        }
        let (_, _, linkMissing) = try answer(api, "POST", "/v1/links/check", json: #"{}"#)
        let (_, _, campaignMissing) = try answer(api, "POST", "/v1/campaigns", json: #"{"alert":{"body":"x"},"devices":"none"}"#)
        #expect(linkMissing.map(\.0) == ["missing"])
        #expect(campaignMissing.map(\.0) == ["wrongType"])
        // Malformed JSON is the same kind of problem on every endpoint.
        for path in ["/v1/links/check", "/v1/notifications/preview", "/v1/campaigns"] {
            let (status, code, errors) = try answer(api, "POST", path, json: #"{"a":1,"a":2}"#)
            #expect(status == 400 && code == "malformedJSON", "\(path)")
            #expect(errors.map(\.0) == ["duplicateKey"], "\(path)")
        }
    }

    @Test(arguments: Transport.allCases) func queryMistakesAreTheSameOnEveryPagedEndpoint(_ transport: Transport) throws {
        let gateway = try LiveGateway()
        let api = gateway.client(transport)
        for path in ["/v1/campaigns", "/v1/campaigns/00000000-0000-0000-0000-000000000000", "/v1/tokens/dead"] {
            let one = try answer(api, "GET", path, query: [("colour", "red")])
            let two = try answer(api, "GET", path, query: [("colour", "red"), ("size", "9")])
            #expect(one.0 == 400 && two.0 == 400, "\(path)")
            // The top-level code does not depend on how many errors there are.
            #expect(one.1 == "invalidQuery" && two.1 == "invalidQuery", "\(path)")
            #expect(one.2.map(\.0) == ["unknownParameter"], "\(path)")
            #expect(two.2.map(\.0) == ["unknownParameter", "unknownParameter"], "\(path)")
            #expect(two.2.map(\.1) == ["parameter", "parameter"], "\(path)")
        }
        for (path, bad) in [("/v1/campaigns", ("limit", "0")), ("/v1/campaigns/00000000-0000-0000-0000-000000000000", ("per_page", "x")),
                            ("/v1/tokens/dead", ("limit", "5000")), ("/v1/tokens/dead", ("cursor", "garbage"))] {
            let (status, code, errors) = try answer(api, "GET", path, query: [bad])
            #expect(status == 400 && code == "invalidQuery", "\(path)?\(bad.0)=\(bad.1)")
            #expect(errors.map(\.0) == ["invalidValue"], "\(path)?\(bad.0)=\(bad.1)")
        }
    }

    @Test(arguments: Transport.allCases) func aBadTokenIsInvalidTokenInABodyAPathAndALine(_ transport: Transport) throws {
        let gateway = try LiveGateway()
        let api = gateway.client(transport)
        let inPath = try answer(api, "POST", "/v1/tokens/xyz/register")
        let inBody = try answer(api, "POST", "/v1/campaigns", json: #"{"alert":{"body":"x"},"devices":["xyz"]}"#)
        let inPreview = try answer(api, "POST", "/v1/notifications/preview", json: #"{"alert":{"body":"x"},"devices":["xyz"]}"#)
        let inLine = try api.call("POST", "/v1/campaigns", body: Array(#"{"alert":{"body":"x"}}"#.utf8) + Array("\nxyz\n".utf8),
                                  headers: [("Content-Type", "application/x-ndjson")])
        let lineProblem = try inLine.object()
        for (status, code, errors) in [inPath, inBody, inPreview] {
            #expect(status == 422 && code == "validationFailed")
            #expect(errors.map(\.0) == ["invalidToken"])
        }
        #expect(inPath.2.map(\.1) == ["parameter"])
        #expect(inBody.2.map(\.1) == ["pointer"])
        #expect(lineProblem["code"] == .string("validationFailed"))
        #expect(errorCodes(lineProblem) == ["invalidToken"])
        #expect(lineProblem["errors"]?.arrayValue?.first?.objectValue?["line"] == .number("2"))
    }
}
