import HTTPServer
import Payloads
import Storage
import StrictJSON
import Timing

/// `POST /v1/tokens/{token}/register` and `GET /v1/tokens/dead`.
enum TokenEndpoints {
    static func register(in builder: inout APIRouterBuilder, storage: any CampaignStorage,
                         clock: any TimeSource) {
        builder.add("POST", "/v1/tokens/{token}/register", operation: "tokens.register") { request, parameters in
            let text = parameters["token"] ?? ""
            let token: String
            switch DeviceToken.normalize(text) {
            case .failure(let problem):
                return Problem.validation([Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .parameter("token"),
                                                      "\(TextSafety.excerpt(text)): \(problem.message)")]).response
            case .success(let normalized): token = normalized
            }
            let time = clock.millisecondsSince1970()
            do throws(StorageError) {
                let dead = try storage.registerToken(token, atMilliseconds: time)
                var w = JSONWriter()
                w.raw("{\"token\":")
                w.string(token)
                w.raw(",\"registered_at_ms\":")
                w.rawBytes(String(time))
                w.raw(",\"was_dead\":")
                w.bool(dead != nil)
                if let dead {
                    w.raw(",\"dead_since_ms\":")
                    w.rawBytes(String(dead.timestampMilliseconds))
                    w.raw(",\"dead_reason\":")
                    w.string(dead.reason)
                }
                w.raw("}\n")
                return jsonResponse(w.bytes)
            } catch {
                return Problem.storageUnavailable(error).response
            }
        }

        builder.add("GET", "/v1/tokens/dead", operation: "tokens.dead") { request, _ in
            switch QueryParameters.read(request, integers: ["since": 0...Int.max, "limit": 1...1000], strings: ["cursor"]) {
            case .failure(let problem): return problem.response
            case .success(let values):
                let since = Int64(values["since"] ?? 0)
                let limit = values["limit"] ?? 100
                var after: (Int64, String)?
                if let cursor = request.queryValue("cursor") {
                    guard let parsed = DeadTokenCursor.parse(cursor) else {
                        return Problem.invalidQuery([Diagnostic(.invalidValue, at: .parameter("cursor"),
                                                                "expected the value of a previous page's next_cursor")]).response
                    }
                    after = parsed
                }
                do throws(StorageError) {
                    let tokens = try storage.deadTokens(sinceMilliseconds: since, after: after, limit: limit)
                    return jsonResponse(render(tokens, since: since, limit: limit))
                } catch {
                    return Problem.storageUnavailable(error).response
                }
            }
        }
    }

    static func render(_ tokens: [DeadToken], since: Int64, limit: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 128 + tokens.count * 160)
        w.raw("{\"tokens\":[")
        for (i, token) in tokens.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"token\":")
            w.string(token.token)
            w.raw(",\"timestamp_ms\":")
            w.rawBytes(String(token.timestampMilliseconds))
            w.raw(",\"reason\":")
            w.string(token.reason)
            w.raw(",\"recorded_at\":")
            w.string(rfc3339(token.recordedAt))
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("],\"next_cursor\":")
        if tokens.count == limit, let last = tokens.last {
            let cursor = DeadTokenCursor.format(last.timestampMilliseconds, last.token)
            w.string(cursor)
            w.raw(",\"next\":")
            w.string("/v1/tokens/dead?since=\(since)&limit=\(limit)&cursor=\(cursor)")
        } else {
            w.raw("null,\"next\":null")
        }
        w.raw("}\n")
        return w.bytes
    }
}

/// Where a page of dead tokens ended: `<timestamp_ms>-<token>`.
enum DeadTokenCursor {
    static func format(_ timestamp: Int64, _ token: String) -> String { "\(timestamp)-\(token)" }

    static func parse(_ text: String) -> (Int64, String)? {
        guard let dash = text.firstIndex(of: "-"), let timestamp = Int64(text[..<dash]) else { return nil }
        let token = String(text[text.index(after: dash)...])
        guard !token.isEmpty, token.utf8.count <= 200, token.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { return nil }
        return (timestamp, token)
    }
}
