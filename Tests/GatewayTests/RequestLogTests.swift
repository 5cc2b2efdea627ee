#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import StrictJSON
import Testing
@testable import Gateway
import Timing

/// The log written to a pipe, read back line by line.
final class CapturedLog {
    let log: RequestLog
    private let readFD: Int32
    private let writeFD: Int32

    init(format: RequestLog.Format = .json, level: RequestLog.Level = .info) {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        readFD = fds[0]
        writeFD = fds[1]
        _ = fcntl(readFD, F_SETFL, fcntl(readFD, F_GETFL) | O_NONBLOCK)
        log = RequestLog(fd: writeFD, messageFD: writeFD, format: format, level: level, clock: SystemClock())
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    func lines() -> [String] {
        log.flush()
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

@Suite struct RequestLogTests {
    func service(_ log: RequestLog) throws -> GatewayService {
        var builder = APIRouterBuilder()
        builder.add("GET", "/open", operation: "open", public: true, query: ["page", "api_key", "Token"]) { _, _ in jsonResponse(Array("{\"a\":1}".utf8)) }
        return GatewayService(router: try builder.build(), keyring: APIKeyring([]), metrics: Metrics(), log: log, clock: SystemClock())
    }

    @Test func requestLinesCarryTheQueryRedactedTheUserAgentAndTheSize() throws {
        let captured = CapturedLog()
        let service = try service(captured.log)
        _ = service.respond(to: HTTPRequest(method: "GET", path: "/open", query: [("page", "2"), ("api_key", "s3cret"), ("Token", "t")],
                                            headers: [("user-agent", "probe/1.0 \u{202E}x")], remoteAddress: "192.0.2.1"))
        let lines = captured.lines()
        try #require(lines.count == 1)
        let object = try #require(try JSONParser().parse(lines[0]).objectValue)
        #expect(object["query"]?.stringValue == "page=2&api_key=REDACTED&Token=REDACTED")
        #expect(object["user_agent"]?.stringValue == "probe/1.0 \\u202ex", "escaped visibly, so decoding gives no raw bidi control")
        #expect(lines[0].contains("\\u202e") || lines[0].contains("\\u202E"), "the bidi control is escaped in the line")
        #expect(object["bytes"] == .number("7"))
        #expect(object["level"]?.stringValue == "info")
        #expect(object["client"]?.stringValue == "192.0.2.1")
        #expect(object["peer"] == nil, "no peer when it is the client")
        #expect(!lines[0].contains("s3cret"))
    }

    @Test func aSafeClientRequestIDIsKeptAndAnUnsafeOneReplacedAndLogged() throws {
        let captured = CapturedLog()
        let service = try service(captured.log)
        let kept = service.respond(to: HTTPRequest(method: "GET", path: "/open", headers: [("x-request-id", "trace-42.A_b")]))
        #expect(kept.header("x-request-id") == "trace-42.A_b")
        for bad in ["has space", String(repeating: "a", count: 65), "", "semi;colon", "\u{7}bell"] {
            let replaced = service.respond(to: HTTPRequest(method: "GET", path: "/open", headers: [("x-request-id", bad)]))
            let id = try #require(replaced.header("x-request-id"))
            #expect(id != bad && id.utf8.count == 16)
        }
        let lines = captured.lines()
        #expect(lines.count == 6)
        let first = try JSONParser().parse(lines[0]).objectValue
        #expect(first?["request_id"]?.stringValue == "trace-42.A_b")
        #expect(first?["client_request_id"] == nil)
        let second = try JSONParser().parse(lines[1]).objectValue
        #expect(second?["client_request_id"]?.stringValue == "has space")
        let long = try JSONParser().parse(lines[2]).objectValue?["client_request_id"]?.stringValue ?? ""
        #expect(long.hasPrefix(String(repeating: "a", count: 64) + "…"))
    }

    @Test func textFormatAndLevels() throws {
        let captured = CapturedLog(format: .text, level: .warn)
        let service = try service(captured.log)
        _ = service.respond(to: HTTPRequest(method: "GET", path: "/open"))
        _ = service.respond(to: HTTPRequest(method: "GET", path: "/missing path", query: [("password", "x")]))
        captured.log.message(.info, "listening on http://127.0.0.1:1")
        captured.log.message(.error, "deadline passed")
        let lines = captured.lines()
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(" warn request ") == true)
        #expect(lines.first?.contains("path=\"/missing path\"") == true)
        #expect(lines.first?.contains("query=password=REDACTED") == true)
        #expect(lines.first?.contains("status=404") == true)
        #expect(lines.last?.hasSuffix(" error deadline passed") == true)
    }

    @Test func jsonMessagesAreObjects() throws {
        let captured = CapturedLog()
        captured.log.message(.info, "listening on http://127.0.0.1:8080 \"quoted\"")
        let lines = captured.lines()
        let object = try #require(try JSONParser().parse(lines[0]).objectValue)
        #expect(object["level"]?.stringValue == "info")
        #expect(object["message"]?.stringValue == "listening on http://127.0.0.1:8080 \"quoted\"")
        #expect(object["time"]?.stringValue?.hasSuffix("Z") == true)
    }
}
