#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import HTTPServer
import TestSupport
import Dispatch

/// A hostile head, followed on the wire by a request that must never run.
struct HostileHead: Sendable {
    var name: String
    var bytes: [UInt8]
    var status: Int
    /// The code in the answer when it is the first request on a connection.
    var code: String
    /// On a kept-alive connection (after a good request): the codes that may answer,
    /// or nil where libmicrohttpd 0.9.75 closes the connection without an answer (a
    /// request line it cannot split; then the close, the absence of the smuggled
    /// request and the log line are checked).
    var laterCodes: Set<String>?

    init(_ name: String, _ text: String, _ status: Int, _ code: String, later: Set<String>? = []) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.status = status
        self.code = code
        self.laterCodes = later == [] ? [code] : later
    }

    init(_ name: String, bytes: [UInt8], _ status: Int, _ code: String, later: Set<String>? = []) {
        self.name = name
        self.bytes = bytes
        self.status = status
        self.code = code
        self.laterCodes = later == [] ? [code] : later
    }
}

let smuggled = "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"

func post(_ headers: String, body: String = "") -> String {
    "POST /x HTTP/1.1\r\nHost: t\r\n\(headers)\r\n\(body)"
}

let hostileHeads: [HostileHead] = [
    HostileHead("Content-Length and Transfer-Encoding",
                post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n"), 400, "ambiguousFraming"),
    HostileHead("two Content-Lengths", post("Content-Length: 0\r\nContent-Length: 37\r\n"), 400, "duplicateContentLength"),
    HostileHead("two equal Content-Lengths", post("Content-Length: 0\r\nContent-Length: 0\r\n"), 400, "duplicateContentLength"),
    HostileHead("Content-Length -1", post("Content-Length: -1\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length +5", post("Content-Length: +5\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length abc", post("Content-Length: abc\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length 1e20", post("Content-Length: 1e20\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length 5 5", post("Content-Length: 5 5\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length 2^64-1", post("Content-Length: 18446744073709551615\r\n"), 400, "invalidContentLength"),
    HostileHead("Content-Length 10^20", post("Content-Length: 99999999999999999999\r\n"), 400, "invalidContentLength"),
    HostileHead("Transfer-Encoding gzip, chunked", post("Transfer-Encoding: gzip, chunked\r\n", body: "0\r\n\r\n"),
                400, "unsupportedTransferEncoding"),
    HostileHead("Transfer-Encoding identity", post("Transfer-Encoding: identity\r\n"), 400, "unsupportedTransferEncoding"),
    HostileHead("Transfer-Encoding identity with a length", post("Transfer-Encoding: identity\r\nContent-Length: 3\r\n", body: "abc"),
                400, "ambiguousFraming"),
    HostileHead("Transfer-Encoding twice", post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n"),
                400, "unsupportedTransferEncoding"),
    HostileHead("obs-fold", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n\r\n", 400, "obsoleteLineFolding"),
    HostileHead("obs-fold with a tab", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\r\n\tb\r\n\r\n", 400, "obsoleteLineFolding"),
    HostileHead("bare LF everywhere", "GET /x HTTP/1.1\nHost: t\n\n", 400, "bareLineFeed"),
    HostileHead("bare LF after a header", "GET /x HTTP/1.1\r\nHost: t\nX-A: a\r\n\r\n", 400, "bareLineFeed",
                later: ["controlCharacter"]),
    HostileHead("bare LF ending the head", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\r\n\n", 400, "bareLineFeed",
                later: ["bareLineFeed"]),
    HostileHead("NUL in the request line", bytes: Array("GET /healthz".utf8) + [0] + Array("/x HTTP/1.1\r\nHost: t\r\n\r\n".utf8),
                400, "controlCharacter", later: ["malformedRequestLine"]),
    HostileHead("NUL in a header value", bytes: Array("GET /x HTTP/1.1\r\nHost: t\r\nX-A: a".utf8) + [0] + Array("b\r\n\r\n".utf8),
                400, "controlCharacter"),
    HostileHead("control byte in a header value", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\u{01}b\r\n\r\n", 400, "controlCharacter"),
    HostileHead("DEL in a header value", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\u{7F}b\r\n\r\n", 400, "controlCharacter"),
    HostileHead("bare CR in a header value", "GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\rb\r\n\r\n", 400, "controlCharacter"),
    HostileHead("tab in the request line", "GET\t/x HTTP/1.1\r\nHost: t\r\n\r\n", 400, "controlCharacter",
                later: ["malformedRequestLine"]),
    HostileHead("request line without a space", "GARBAGE\r\nHost: t\r\n\r\n", 400, "malformedRequestLine", later: nil),
    HostileHead("request line starting with a space", " GET /x HTTP/1.1\r\nHost: t\r\n\r\n", 400, "malformedRequestLine",
                later: nil),
    HostileHead("two spaces in the request line", "GET  /x HTTP/1.1\r\nHost: t\r\n\r\n", 400, "malformedRequestLine"),
    HostileHead("space before the colon", "GET /x HTTP/1.1\r\nHost : t\r\n\r\n", 400, "malformedHeader", later: ["malformedHeader", "missingHost"]),
    HostileHead("header line without a colon", "GET /x HTTP/1.1\r\nHost: t\r\nnocolon\r\n\r\n", 400, "malformedHeader"),
    HostileHead("two Authorization headers", "GET /x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
                400, "duplicateAuthorization"),
    HostileHead("two Idempotency-Key headers", post("Idempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: 0\r\n"),
                400, "duplicateIdempotencyKey"),
    HostileHead("two Host headers", "GET /x HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n", 400, "duplicateHost"),
    HostileHead("no Host", "GET /x HTTP/1.1\r\nX-A: a\r\n\r\n", 400, "missingHost"),
    HostileHead("HTTP/1.2", "GET /x HTTP/1.2\r\nHost: t\r\n\r\n", 505, "httpVersionNotSupported"),
    HostileHead("HTTP/2.0", "GET /x HTTP/2.0\r\nHost: t\r\n\r\n", 505, "httpVersionNotSupported"),
    HostileHead("HTTP/0.9", "GET /x\r\n\r\n", 400, "malformedRequestLine"),
    HostileHead("lowercase version", "GET /x http/1.1\r\nHost: t\r\n\r\n", 400, "malformedRequestLine"),
    HostileHead("absolute-form target", "GET http://t/x HTTP/1.1\r\nHost: t\r\n\r\n", 400, "invalidRequestTarget"),
    HostileHead("non-ASCII target", bytes: Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: t\r\n\r\n".utf8),
                400, "invalidRequestTarget"),
    HostileHead("head over 16 KiB", "GET /x HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n",
                431, "headersTooLarge"),
    HostileHead("head over 64 KiB", "GET /x HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 70_000))\r\n\r\n",
                431, "headersTooLarge"),
    HostileHead("request line over 16 KiB", "GET /\(String(repeating: "a", count: 20_000)) HTTP/1.1\r\nHost: t\r\n\r\n",
                414, "requestLineTooLong", later: ["headersTooLarge"]),
    HostileHead("request line over 64 KiB", "GET /\(String(repeating: "a", count: 70_000)) HTTP/1.1\r\nHost: t\r\n\r\n",
                414, "requestLineTooLong"),
    HostileHead("300 query parameters", "GET /x?\((0..<300).map { "p\($0)=1" }.joined(separator: "&")) HTTP/1.1\r\nHost: t\r\n\r\n",
                400, "tooManyQueryParameters"),
    // 900 parameters do not fit libmicrohttpd's 64 KiB per connection on a later request.
    HostileHead("900 query parameters", "GET /x?\((0..<900).map { "p\($0)=1" }.joined(separator: "&")) HTTP/1.1\r\nHost: t\r\n\r\n",
                400, "tooManyQueryParameters", later: ["tooManyQueryParameters", "headersTooLarge"]),
    HostileHead("malformed chunk size", post("Transfer-Encoding: chunked\r\n", body: "zz\r\nabc\r\n0\r\n\r\n"), 400, "malformedChunk"),
    HostileHead("chunk size over 2^64", post("Transfer-Encoding: chunked\r\n", body: "10000000000000000\r\nabc\r\n0\r\n\r\n"),
                400, "malformedChunk"),
    HostileHead("chunk without its CRLF", post("Transfer-Encoding: chunked\r\n", body: "3\r\nabcX0\r\n\r\n"), 400, "malformedChunk"),
    HostileHead("trailer fields", post("Transfer-Encoding: chunked\r\n", body: "3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"), 400, "malformedChunk"),
]

@Suite struct FramingTests {
    /// Sends `bytes`, reads until the server closes, and checks that exactly the
    /// expected answers came back: nothing from the smuggled request.
    func exchange(_ bytes: [UInt8], port: Int, _ name: String) throws -> [RawResponse] {
        let client = try #require(RawHTTPClient(port: port))
        client.send(bytes + Array(smuggled.utf8))
        let (data, closed) = client.readUntilClose(seconds: 8)
        #expect(closed, "\(name): the connection stayed open")
        #expect(!String(decoding: data, as: UTF8.self).contains("/smuggled"), "\(name): the request after the hostile one ran")
        var responses: [RawResponse] = []
        var rest = data[...]
        while let response = RawResponse(parsing: Array(rest)) {
            responses.append(response)
            rest = rest.dropFirst(response.length)
        }
        return responses
    }

    // One test walks every case on one server: the cases block on sockets, and a
    // parameterized test would hold that many of the test runner's threads at once.
    @Test func everyHostileHeadIsRefusedAsTheFirstRequest() throws {
        let server = try startServer()
        for head in hostileHeads {
            let responses = try exchange(head.bytes, port: server.port, head.name)
            guard responses.count == 1 else {
                Issue.record("\(head.name): \(responses.count) responses")
                continue
            }
            #expect(responses[0].status == head.status, "\(head.name)")
            #expect(String(responses[0].bodyText.prefix { $0 != ":" }) == head.code, "\(head.name): \(responses[0].bodyText)")
            #expect(responses[0].header("connection")?.lowercased() == "close", "\(head.name)")
        }
    }

    @Test func everyHostileHeadIsRefusedOnAKeptAliveConnection() throws {
        #expect(HTTPServer.replacesLibraryAnswers)
        let record = EventRecord()
        let server = try startServer(EchoResponder(record: record))
        let first = Array("GET /first HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
        for head in hostileHeads {
            record.clear()
            let responses = try exchange(first + head.bytes, port: server.port, head.name)
            // Every hostile request leaves one line: the refusal, or the close without an
            // answer (logged once libmicrohttpd has cleaned the connection up).
            #expect(record.wait(for: 1, seconds: 3) == [head.laterCodes == nil ? "closed 0" : "refused"], "\(head.name): \(record.events)")
            guard responses.count >= 1 else {
                Issue.record("\(head.name): no response")
                continue
            }
            #expect(responses[0].status == 200, "\(head.name)")
            #expect(responses[0].bodyText.hasPrefix("GET /first\n"), "\(head.name)")
            if let codes = head.laterCodes {
                guard responses.count == 2 else {
                    Issue.record("\(head.name): \(responses.count) responses")
                    continue
                }
                #expect(responses[1].status == head.status || codes != [head.code], "\(head.name)")
                let code = String(responses[1].bodyText.prefix { $0 != ":" })
                #expect(codes.contains(code), "\(head.name): answered \(code)")
                #expect(responses[1].header("connection")?.lowercased() == "close", "\(head.name)")
                #expect(responses[1].header("content-type") == "text/plain", "\(head.name): not the responder's answer")
            } else {
                #expect(responses.count == 1, "\(head.name): \(responses.count) responses")
            }
        }
    }

    @Test func aChunkedBodyIsTheLastRequestOfItsConnection() throws {
        // libmicrohttpd accepts a bare LF ending a chunk line; whatever a stricter
        // front end made of the bytes after it, none of them runs as a request here.
        let server = try startServer()
        for body in ["5\r\nhello\r\n0\r\n\r\n", "5\nhello\n0\n\r\n"] {
            let client = try #require(RawHTTPClient(port: server.port))
            client.send(post("Transfer-Encoding: chunked\r\n", body: body) + smuggled)
            let (data, closed) = client.readUntilClose(seconds: 8)
            #expect(closed)
            let response = try #require(RawResponse(parsing: data))
            #expect(response.status == 200)
            #expect(response.bodyText == "POST /x\nbody 5\n")
            #expect(response.header("connection")?.lowercased() == "close")
            #expect(data.count == response.length, "something followed the answer")
        }
    }

    @Test func anAbandonedHeadIsLogged() throws {
        let record = EventRecord()
        let server = try startServer(EchoResponder(record: record)) { $0.connectionTimeoutSeconds = 1 }
        // First head, unfinished until the timeout; the client closing in the middle of a
        // later request line; a later request line that never ends.
        let cases = ["GET /x HTTP/1.1\r\nHost: t\r\n", "GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HT",
                     "GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1"]
        for (index, text) in cases.enumerated() {
            record.clear()
            let client = try #require(RawHTTPClient(port: server.port))
            client.send(text)
            if index == 1 {
                usleep(200_000)
                shutdown(client.fd, Int32(SHUT_WR))
                #expect(client.waitForClose(seconds: 4), "case \(index)")
            } else {
                #expect(client.waitForClose(seconds: 4), "case \(index)")
            }
            #expect(record.wait(for: 1, seconds: 3) == ["closed 0"], "case \(index): \(record.events)")
        }
        // A connection closed after a whole request leaves no extra line.
        record.clear()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = client.readResponse()
        shutdown(client.fd, Int32(SHUT_WR))
        #expect(client.waitForClose(seconds: 4))
        usleep(300_000)
        #expect(record.events.isEmpty, "\(record.events)")
    }

    @Test func aGoodHeadIsServedAndTheConnectionKeptAlive() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        for n in 0..<3 {
            client.send("GET /n\(n)?a=1 HTTP/1.1\r\nHost: t\r\nX-Test: \t spaced \t\r\nUser-Agent: caf\u{E9}\r\n\r\n")
            let response = try #require(client.readResponse())
            #expect(response.status == 200)
            #expect(response.bodyText == "GET /n\(n)\nq a=1\nx-test spaced\nbody 0\n")
        }
    }

    @Test func pipelinedGoodRequestsAreAllServed() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        let body = "hello"
        client.send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n\(body)"
            + "GET /c HTTP/1.1\r\nHost: t\r\n\r\n"
            + "POST /b HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        let (data, closed) = client.readUntilClose(seconds: 8)
        #expect(closed)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("POST /a\nbody 5\n"))
        #expect(text.contains("POST /b\nbody 5\n"))
        #expect(text.contains("GET /c\nbody 0\n"))
    }

    @Test func aSlowHeadIsCheckedWhenItsBadLineArrives() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /x HTTP/1.1\r\n")
        usleep(50_000)
        client.send("Host: t\r\n")
        usleep(50_000)
        client.send(" folded\r\n")  // the head is not finished; the fold alone is enough
        let (data, closed) = client.readUntilClose(seconds: 4)
        #expect(closed)
        let response = try #require(RawResponse(parsing: data))
        #expect(response.status == 400)
        #expect(response.bodyText == "obsoleteLineFolding")
    }

    /// libmicrohttpd's timeout is an idle timeout: a second head sent one byte a second
    /// never reached it. Every head now has the first head's deadline.
    @Test func aSecondHeadSentOneByteASecondIsClosedAtTheHeadDeadline() throws {
        let record = EventRecord()
        let server = try startServer(EchoResponder(record: record)) { $0.connectionTimeoutSeconds = 2 }
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
        record.clear()
        let started = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        var closedAfter: Double?
        // One byte a second of a head that would take 26 s; never idle for 2 s.
        for byte in Array("GET /b HTTP/1.1\r\nHost: t\r\n".utf8) {
            guard client.send([byte]) else { closedAfter = Double(DispatchTime.now().uptimeNanoseconds) / 1e9 - started; break }
            if client.waitForClose(seconds: 1) { closedAfter = Double(DispatchTime.now().uptimeNanoseconds) / 1e9 - started; break }
        }
        let after = try #require(closedAfter, "the connection was still open after the whole slow head")
        // The deadline is 2 s after the first answer; the gate looks every 250 ms. The bound
        // is loose for a loaded machine, and far below the 26 s the head took to send.
        #expect(after < 12, "closed after \(after) s")
        #expect(record.wait(for: 1, seconds: 3) == ["closed 0"], "\(record.events)")
    }

    @Test func aKeptAliveConnectionStaysUsableWithinTheHeadDeadline() throws {
        let server = try startServer { $0.connectionTimeoutSeconds = 2 }
        let client = try #require(RawHTTPClient(port: server.port))
        for n in 0..<4 {
            client.send("GET /n\(n) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.readResponse()?.status == 200, "request \(n)")
            usleep(300_000)
        }
    }

    @Test func anUnfinishedHeadIsClosedAtTheTimeout() throws {
        let server = try startServer { $0.connectionTimeoutSeconds = 1 }
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /x HTTP/1.1\r\nHost: t\r\n")
        #expect(client.waitForClose(seconds: 4))
    }
}

@Suite struct RequestHeadCheckTests {
    let check = RequestHeadCheck()

    @Test func incompleteUntilTheEmptyLine() {
        #expect(check.check(Array("GET / HTTP/1.1\r\nHost: t\r\n".utf8)) == .incomplete)
        #expect(check.check(Array("GET / HTTP/1.1\r\nHost: t\r\n\r".utf8)) == .incomplete)
        #expect(check.check(Array("GET / HTTP/1.1\r\nHost: t\r\n\r\nBODY".utf8)) == .complete(headLength: 27))
    }

    @Test func contentLengthIsPlainDigits() {
        #expect(RequestHeadCheck.contentLength("0") == 0)
        #expect(RequestHeadCheck.contentLength("000123") == 123)
        #expect(RequestHeadCheck.contentLength("999999999999999999") == 999_999_999_999_999_999)
        for bad in ["", "-1", "+5", "1e3", "0x1", " 1", "1 ", "1,1", "9999999999999999999"] {
            #expect(RequestHeadCheck.contentLength(bad) == nil, "\(bad)")
        }
    }

    @Test func everyCodeHasAStatus() {
        for code in FramingViolation.Code.allCases {
            #expect([400, 414, 431, 505].contains(code.status))
        }
    }
}
