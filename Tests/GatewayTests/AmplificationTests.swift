import DeepLinks
import HTTPServer
import StrictJSON
import Testing
@testable import Gateway

/// Hostile input must never make a big answer: every error is at most 64 KiB and at
/// most 100 entries long, whatever the body, path or header.
@Suite struct AmplificationTests {
    /// Random bodies built to make many or long problems: thousands of unknown keys,
    /// huge keys and strings, wrong types everywhere, deep nesting, NDJSON, raw bytes.
    struct HostileBodies {
        var random: SplitMix64
        let maxBytes: Int

        mutating func text(_ count: Int) -> String {
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz\u{202E}\u{0007}\"\\é/~0123456789".unicodeScalars)
            var out = String.UnicodeScalarView()
            for _ in 0..<count { out.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            return String(out)
        }

        mutating func quoted(_ count: Int) -> String {
            var w = JSONWriter(capacity: count + 8)
            w.string(text(count))
            return String(decoding: w.bytes, as: UTF8.self)
        }

        mutating func next() -> [UInt8] {
            let budget = Int(random.next() % UInt64(maxBytes)) + 16
            switch random.next() % 9 {
            case 0:  // many unknown keys
                var parts: [String] = []
                var size = 2
                var n = 0
                while size < budget {
                    let key = "\"k\(n)_\(text(Int(random.next() % 6)).unicodeScalars.filter { $0.isASCII && $0 != "\"" && $0 != "\\" }.map(String.init).joined())\":0"
                    parts.append(key)
                    size += key.utf8.count + 1
                    n += 1
                }
                return Array(("{" + parts.joined(separator: ",") + "}").utf8)
            case 1:  // few keys, each enormous
                let keyLength = budget / 4
                return Array("{\(quoted(keyLength)):1,\(quoted(keyLength)):[\(quoted(keyLength))]}".utf8)
            case 2:  // a campaign whose every device is wrong
                let count = max(1, budget / 6)
                return Array(("{\"alert\":{\"body\":\"x\"},\"devices\":[" + Array(repeating: "1", count: count).joined(separator: ",") + "]}").utf8)
            case 3:  // devices that are long bad strings
                let count = max(1, Int(random.next() % 500) + 1)
                let each = max(1, budget / count)
                return Array(("{\"alert\":{\"body\":\"x\"},\"devices\":[" + (0..<count).map { _ in quoted(each) }.joined(separator: ",") + "]}").utf8)
            case 4:  // link batches full of long bad links
                let count = Int(random.next() % 1500) + 1
                let each = max(1, budget / count)
                return Array(("{\"links\":[" + (0..<count).map { _ in quoted(each) }.joined(separator: ",") + "]}").utf8)
            case 5:  // deep nesting
                let depth = Int(random.next() % 2000) + 1
                return Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            case 6:  // NDJSON with many bad lines
                var lines = ["{\"alert\":{\"body\":\"x\"}}"]
                var size = 30
                while size < budget {
                    let line = "{\"token\":\(quoted(Int(random.next() % 300))),\(quoted(Int(random.next() % 300))):1}"
                    lines.append(line)
                    size += line.utf8.count + 1
                }
                return Array(lines.joined(separator: "\n").utf8)
            case 7:  // raw bytes
                return (0..<budget).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            default:  // wrong types at every member the endpoints know
                let keys = ["alert", "deeplink", "devices", "data", "template", "variables", "link", "links", "push_type",
                            "priority", "relevance_score", "expiration", "collapse_id", "dry_run", "topic"]
                let values = ["null", "true", "[]", "{}", "1e999", "-0", "\"\"", quoted(Int(random.next() % 2000))]
                let members = keys.map { "\"\($0)\":\(values[Int(random.next() % UInt64(values.count))])" }
                return Array(("{" + members.joined(separator: ",") + "}").utf8)
            }
        }
    }

    static func concretePath(_ pattern: String, token: String) -> String {
        pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") ? (segment == "{token}" ? token : "c_" + String(repeating: "z", count: 300)) : String(segment)
        }.joined(separator: "/")
    }

    @Test func noErrorAnswerGrowsWithTheInput() throws {
        let gateway = try LiveGateway()
        var bodies = HostileBodies(random: SplitMix64(seed: 0x5EED_12), maxBytes: 512 << 10)
        let routes = gateway.service.router.entries
        let contentTypes = ["application/json", "application/x-ndjson", "text/plain",
                            "application/json; " + String(repeating: "x", count: 30_000)]
        var largest = 0
        var checked = 0
        for round in 0..<3 {
            for route in routes {
                let body = bodies.next()
                let contentType = contentTypes[(round + checked) % contentTypes.count]
                let token = round % 2 == 0 ? TestTokens.device : String(repeating: "\u{202E}g", count: 5000)
                var request = HTTPRequest(method: route.method, path: Self.concretePath(route.pattern, token: token),
                                          query: [("limit", String(repeating: "9", count: 5000)), ("x" + String(repeating: "y", count: 5000), "1")],
                                          headers: [("content-type", contentType), ("idempotency-key", String(repeating: "\u{7}", count: 9000))],
                                          body: body, remoteAddress: "127.0.0.1")
                if round == 2 { request.query = [] }
                let response = gateway.service.respond(to: request)
                checked += 1
                guard response.status >= 400 else { continue }
                largest = max(largest, response.body.count)
                #expect(response.body.count <= Problem.maxResponseBytes,
                        "\(route.method) \(route.pattern): \(response.status) answer of \(response.body.count) bytes")
                let problem = try JSONParser().parse(response.body).objectValue
                #expect((problem?["errors"]?.arrayValue?.count ?? 0) <= Problem.maxListed)
            }
        }
        // Unknown paths and methods echo the path and method: cut too.
        let longPath = "/" + String(repeating: "p", count: 100_000)
        for method in ["GET", "POST", String(repeating: "M", count: 50_000)] {
            let response = gateway.service.respond(to: HTTPRequest(method: method, path: longPath))
            #expect(response.body.count <= 2048, "\(response.status): \(response.body.count) bytes")
        }
        #expect(checked >= routes.count * 3)
        #expect(largest > 0)
    }

    @Test func aLinkCheckWithSixtyThousandUnknownKeysListsOneHundred() throws {
        let gateway = try LiveGateway()
        let body = "{" + (0..<60_000).map { "\"k\($0)\":0" }.joined(separator: ",") + "}"
        let response = try #require(gateway.request("POST", "/v1/links/check", json: body))
        #expect(response.status == 422)
        #expect(response.body.count < Problem.maxResponseBytes)
        let problem = try gateway.object(response)
        #expect(problem["errors"]?.arrayValue?.count == 100)
        #expect(problem["detail"]?.stringValue?.hasPrefix("60001 problems in the request") == true)
        #expect(problem["detail"]?.stringValue?.contains("(the first 100 are listed)") == true)
    }

    @Test func aLongContentTypeIsCutInTheAnswer() throws {
        let gateway = try LiveGateway()
        let contentType = "text/" + String(repeating: "x", count: 10_000)
        let response = try #require(RawHTTPClientExchange.post(port: gateway.port, path: "/v1/links/check",
                                                              contentType: contentType, body: "{}"))
        #expect(response.status == 415)
        let detail = try gateway.object(response)["detail"]?.stringValue ?? ""
        #expect(detail.utf8.count < 400)
        #expect(detail.contains("(10005 bytes)"))
    }

    @Test func problemRenderingIsBoundedWhateverItHolds() {
        let huge = String(repeating: "k", count: 200_000)
        let errors = (0..<150).map { i in
            Diagnostic(.unknownKey, at: .pointer(JSONPath((0..<40).map { _ in .key(huge) })), String(repeating: "m", count: 10_000) + "\(i)")
        }
        let problem = Problem(status: 422, code: .validationFailed, title: "t", detail: String(repeating: "d", count: 100_000), errors: errors)
        let response = problem.response
        #expect(response.body.count <= Problem.maxResponseBytes)
        let object = try? JSONParser().parse(response.body).objectValue
        let listed = object?["errors"]?.arrayValue?.count ?? 0
        #expect(listed >= 1 && listed < 100)
        #expect(object?["detail"]?.stringValue?.contains("of 150 are listed") == true)
    }
}

import TestSupport

/// A POST with a chosen Content-Type over a raw socket.
enum RawHTTPClientExchange {
    static func post(port: Int, path: String, contentType: String, body: String) -> RawResponse? {
        RawHTTPClient.exchange(port: port, method: "POST", path: path, headers: [("Content-Type", contentType)],
                               body: Array(body.utf8))
    }
}
