import HTTPServer
import StrictJSON

/// The one way a test calls the HTTP API, whether the service answers in this process
/// (`InProcessClient`: the responder called directly, as the server would) or over a
/// socket (`LiveClient`: a live `HTTPServer`, or a `pushgate serve` child process). A
/// test written against `APIClient` runs unchanged on either; `RawHTTPClient` stays for
/// the tests that must misbehave on the wire (slow, idle or malformed clients).
public protocol APIClient: Sendable {
    /// Sends one request; throws only when no answer could be had at all (a live server
    /// that refused the connection or closed it without answering).
    func send(_ request: APIRequest) throws -> RawResponse
}

/// A request as a test writes it: the query as name–value pairs, never pre-encoded.
public struct APIRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [(name: String, value: String)]
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(_ method: String, _ path: String, query: [(name: String, value: String)] = [],
                headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The request target as sent on the wire: the path, then the query percent-encoded
    /// (everything but RFC 3986's unreserved characters), so the server decodes exactly
    /// the names and values given.
    public var target: String {
        guard !query.isEmpty else { return path }
        return path + "?" + query.map { APIRequest.encoded($0.name) + "=" + APIRequest.encoded($0.value) }.joined(separator: "&")
    }

    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.padded(UInt64(byte), width: 2).uppercased()
            }
        }
        return out
    }
}

public struct APIClientError: Error, CustomStringConvertible {
    public let description: String
}

extension APIClient {
    /// `key`: sent as `Authorization: Bearer <key>`. `json`: the body, sent as
    /// `application/json`; `body` with the caller's own `Content-Type` header.
    public func call(_ method: String, _ path: String, query: [(name: String, value: String)] = [], key: String? = nil,
                     json: String? = nil, body: [UInt8]? = nil, headers: [(name: String, value: String)] = []) throws -> RawResponse {
        var all = headers
        if let key { all.append(("Authorization", "Bearer " + key)) }
        if json != nil { all.append(("Content-Type", "application/json")) }
        return try send(APIRequest(method, path, query: query, headers: all, body: json.map { Array($0.utf8) } ?? body ?? []))
    }

    /// The answer's body as a JSON object; throws when it is not one.
    public func object(_ method: String, _ path: String, query: [(name: String, value: String)] = [], key: String? = nil,
                       json: String? = nil, headers: [(name: String, value: String)] = []) throws -> JSONObject {
        try call(method, path, query: query, key: key, json: json, headers: headers).object()
    }
}

extension RawResponse {
    /// The body as a JSON object; throws when it is not one.
    public func object() throws -> JSONObject {
        guard let object = try JSONParser().parse(body).objectValue else {
            throw APIClientError(description: "expected a JSON object, got \(status): \(bodyText.prefix(200))")
        }
        return object
    }

    /// A response made in this process, as a client would read it off the wire.
    public init(_ response: HTTPResponse) {
        self.init(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
    }
}

/// The responder (`GatewayService`) called in this process: no socket, no threads. A
/// hand-off to the upstream pool is run here, as the pool would run it.
public struct InProcessClient: APIClient {
    public let responder: any HTTPResponder
    /// The peer the service sees (loopback, as a local client).
    public var remoteAddress: String

    public init(_ responder: any HTTPResponder, remoteAddress: String = "127.0.0.1") {
        self.responder = responder
        self.remoteAddress = remoteAddress
    }

    public func send(_ request: APIRequest) throws -> RawResponse {
        // The server decodes a query off the wire; here there is no wire to decode.
        guard !request.path.contains("?") else {
            throw APIClientError(description: "give the query of \(request.path) as query: pairs")
        }
        // As the server does: header names arrive in lower case.
        let headers = request.headers.map { (name: $0.name.lowercased(), value: $0.value) }
        let response = responder.respond(to: HTTPRequest(method: request.method, path: request.path, query: request.query,
                                                         headers: headers, body: request.body, remoteAddress: remoteAddress))
        return RawResponse(response.settled())
    }
}

/// A live server on a loopback port: one request per connection (`RawHTTPClient.exchange`).
public struct LiveClient: APIClient {
    public let port: Int

    public init(port: Int) {
        self.port = port
    }

    public func send(_ request: APIRequest) throws -> RawResponse {
        guard let response = RawHTTPClient.exchange(port: port, method: request.method, path: request.target,
                                                    headers: request.headers.map { ($0.name, $0.value) }, body: request.body) else {
            throw APIClientError(description: "no answer from 127.0.0.1:\(port) to \(request.method) \(request.path)")
        }
        return response
    }
}
