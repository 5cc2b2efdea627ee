import HTTPServer
import Payloads
import Storage
import StrictJSON
import Timing

/// `POST /v1/apps/{app}/tokens/{token}/register` and `GET /v1/apps/{app}/tokens/dead`
/// (and the same without `/apps/{app}` for the only app): a dead token is its app's.
enum TokenEndpoints {
    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, storage: any CampaignStorage,
                         clock: any TimeSource) {
        builder.addPerApp("POST", "/tokens/{token}/register", operation: "tokens.register", apps: apps) { request, parameters, app throws(Problem) in
            let text = parameters["token"] ?? ""
            let token: String
            // In a path the token is bare hex (the spaces and <> of pasted Xcode logs are
            // for JSON bodies), exactly the pattern the OpenAPI document gives.
            let separator = text.unicodeScalars.first { [" ", "<", ">"].contains($0) }
            switch separator.map({ .failure(ValueProblem("not hex: \(TextSafety.quoted($0)) (a token in the path is hex digits only)")) }) ?? DeviceToken.normalize(text) {
            case .failure(let problem):
                throw .validation([Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .parameter("token"),
                                              "\(TextSafety.excerpt(text)): \(problem.message)")])
            case .success(let normalized): token = normalized
            }
            let time = clock.millisecondsSince1970()
            let dead = try fromStorage(storage.registerToken(token, app: app.name, atMilliseconds: time))
            var w = JSONWriter()
            w.object { w in
                w.member("token", token)
                w.member("registered_at_ms", time)
                w.member("was_dead", dead != nil)
                if let dead {
                    w.member("dead_since_ms", dead.timestampMilliseconds)
                    w.member("dead_reason", dead.reason)
                }
            }
            w.raw("\n")
            return jsonResponse(w.bytes)
        }

        builder.addPerApp("GET", "/tokens/dead", operation: "tokens.dead", apps: apps) { request, _, app throws(Problem) in
            let values = try QueryParameters.read(request, integers: ["since": 0...Int.max, "limit": 1...1000])
            let since = Int64(values["since"] ?? 0)
            let limit = values["limit"] ?? 100
            var after: (Int64, String)?
            if let cursor = request.queryValue("cursor") {
                guard let parsed = DeadTokenCursor.parse(cursor) else {
                    throw .invalidQuery([Diagnostic(.invalidValue, at: .parameter("cursor"),
                                                    "expected the value of a previous page's next_cursor")])
                }
                after = parsed
            }
            let tokens = try fromStorage(storage.deadTokens(app: app.name, sinceMilliseconds: since, after: after, limit: limit))
            return jsonResponse(render(tokens, since: since, limit: limit, path: request.path))
        }
    }

    static func render(_ tokens: [DeadToken], since: Int64, limit: Int, path: String = "/v1/tokens/dead") -> [UInt8] {
        var w = JSONWriter(capacity: 128 + tokens.count * 160)
        w.object { w in
            w.member("tokens", array: { w in
                for token in tokens {
                    w.object { w in
                        w.member("token", token.token)
                        w.member("timestamp_ms", token.timestampMilliseconds)
                        w.member("reason", token.reason)
                        w.member("recorded_at", rfc3339(token.recordedAt))
                    }
                }
            })
            if tokens.count == limit, let last = tokens.last {
                let cursor = DeadTokenCursor.format(last.timestampMilliseconds, last.token)
                w.member("next_cursor", cursor)
                w.member("next", "\(path)?since=\(since)&limit=\(limit)&cursor=\(cursor)")
            } else {
                w.member("next_cursor", orNull: nil as String?)
                w.member("next", orNull: nil as String?)
            }
        }
        w.raw("\n")
        return w.bytes
    }
}

/// Where a page of dead tokens ended: `<timestamp_ms>-<token>`.
enum DeadTokenCursor {
    static func format(_ timestamp: Int64, _ token: String) -> String { "\(timestamp)-\(token)" }

    /// Exactly what `format` writes: 1–18 digits (always within Int64), `-`, 1–200
    /// lowercase hex digits; the pattern the OpenAPI document gives.
    static func parse(_ text: String) -> (Int64, String)? {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let digits = text[..<dash].utf8
        guard (1...18).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let timestamp = Int64(text[..<dash]) else { return nil }
        let token = String(text[text.index(after: dash)...])
        guard !token.isEmpty, token.utf8.count <= 200, token.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { return nil }
        return (timestamp, token)
    }
}
