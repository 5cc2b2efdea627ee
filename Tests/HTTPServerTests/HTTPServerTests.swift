#if canImport(Glibc)
import Glibc
#endif
internal import CLinuxShims
import Dispatch
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport
import Timing

extension HTTPServer {
    /// Requests waiting for or running on the worker pool.
    var workerLoad: Int { context.pool.load }

    /// Hand-offs waiting for or running on the upstream pool.
    var upstreamLoad: Int { context.upstream.load }

    /// Heap trims done so far (one after each quiet spell that follows big requests).
    var heapTrims: Int { context.trim.count.load(ordering: .relaxed) }
}

/// Echoes what it saw, so tests can check what the server delivered.
struct EchoResponder: HTTPResponder {
    var delayMicroseconds: UInt32 = 0
    /// Where refusals and unanswered requests are noted, as a gateway would log them.
    var record: EventRecord?

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if delayMicroseconds > 0 { usleep(delayMicroseconds) }
        var text = "\(request.method) \(request.path)\n"
        for (name, value) in request.query { text += "q \(name)=\(value)\n" }
        if let agent = request.header("X-Test") { text += "x-test \(agent)\n" }
        text += "body \(request.body.count)\n"
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array(text.utf8))
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, headers: [("Connection", "close")], body: Array("limit \(limit)".utf8))
    }

    func shuttingDown(_ request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: 503, headers: [("Connection", "close")], body: [])
    }

    func refused(_ violation: FramingViolation, remoteAddress: String) -> HTTPResponse {
        record?.note("refused")
        return HTTPResponse(status: violation.status, headers: [("Content-Type", "text/plain")],
                            body: Array(violation.code.rawValue.utf8))
    }

    func answeredByLibrary(status: Int, remoteAddress: String) {
        record?.note("closed \(status)")
    }
}

/// What a responder was told, in order.
final class EventRecord: Sendable {
    private let list = Mutex<[String]>([])

    func note(_ event: String) { list.withLock { $0.append(event) } }
    func clear() { list.withLock { $0.removeAll() } }
    var events: [String] { list.withLock { $0 } }

    /// The events once there are `count` (or after `seconds`), and a little longer, so
    /// that one too many is seen too.
    func wait(for count: Int, seconds: Double) -> [String] {
        let deadline = Double(DispatchTime.now().uptimeNanoseconds) / 1e9 + seconds
        while events.count < count && Double(DispatchTime.now().uptimeNanoseconds) / 1e9 < deadline { usleep(10_000) }
        usleep(50_000)
        return events
    }
}

/// `/slow` runs on the pool and waits until released; everything else is immediate.
final class PoolResponder: HTTPResponder {
    let started = Atomic<Int>(0)
    private let gate = DispatchSemaphore(value: 0)
    private let released = Atomic<Bool>(false)

    func release() {
        released.store(true, ordering: .relaxed)
        for _ in 0..<16 { gate.signal() }
    }

    func runsLong(_ request: HTTPRequest) -> Bool { request.path == "/slow" }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if request.path == "/slow" {
            started.add(1, ordering: .relaxed)
            if !released.load(ordering: .relaxed) { _ = gate.wait(timeout: .now() + 10) }
        }
        return HTTPResponse(status: 200, body: Array(request.path.utf8))
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
    func shuttingDown(_ request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 503, headers: [("Connection", "close")]) }
}

func startServer(_ responder: any HTTPResponder = EchoResponder(), configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: 1024,
                                                connectionTimeoutSeconds: 5)
    configure(&configuration)
    return try HTTPServer(configuration: configuration, responder: responder, clock: SystemClock())
}

@Suite struct HTTPServerTests {
    @Test func answersWithHeadQueryAndBody() throws {
        let server = try startServer()
        #expect(server.port > 0)
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("POST /v1/x?a=1&b=%20two HTTP/1.1\r\nHost: t\r\nX-Test: yes\r\nContent-Length: 5\r\n\r\nhello")
        let response = try #require(client.readResponse())
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain")
        #expect(response.bodyText == "POST /v1/x\nq a=1\nq b= two\nx-test yes\nbody 5\n")
    }

    @Test func keepsAnEncodedNULInsteadOfCuttingThePathOrQueryShort() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /v1/x%00junk?limit=5%00&a=%41%2b%zz HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.bodyText == "GET /v1/x%00junk\nq limit=5%00\nq a=A+%zz\nbody 0\n")
    }

    @Test func assemblesABodySentSlowlyInPieces() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 600\r\n\r\n")
        for _ in 0..<6 {
            client.send(String(repeating: "x", count: 100))
            usleep(20_000)
        }
        let response = try #require(client.readResponse())
        #expect(response.bodyText.hasSuffix("body 600\n"))
    }

    @Test func refusesADeclaredBodyOverTheLimitWithoutReadingIt() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 413)
        #expect(response.bodyText == "limit 1024")
    }

    @Test func refusesAChunkedBodyThatGrowsOverTheLimit() throws {
        let server = try startServer()
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("POST /big HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "y", count: 600)
        client.send("258\r\n\(chunk)\r\n")
        client.send("258\r\n\(chunk)\r\n")
        client.send("0\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 413)
    }

    @Test func closesAnIdleConnection() throws {
        let server = try startServer { $0.connectionTimeoutSeconds = 1 }
        let client = try #require(RawHTTPClient(port: server.port))
        client.send("GET /half")  // never finishes the head
        #expect(client.waitForClose(seconds: 5))
    }

    @Test func limitsConnectionsPerAddress() throws {
        let server = try startServer { $0.perIPConnectionLimit = 2 }
        let first = try #require(RawHTTPClient(port: server.port))
        let second = try #require(RawHTTPClient(port: server.port))
        first.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        second.send("GET /b HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(first.readResponse()?.status == 200)
        #expect(second.readResponse()?.status == 200)
        let third = try #require(RawHTTPClient(port: server.port))
        third.send("GET /c HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(third.readResponse() == nil)
    }

    @Test func shutdownLetsARequestInFlightFinish() throws {
        let server = try startServer(EchoResponder(delayMicroseconds: 400_000))
        let port = server.port
        let client = try #require(RawHTTPClient(port: port))
        client.send("GET /in-flight HTTP/1.1\r\nHost: t\r\n\r\n")
        // Wait until the server is handling it, then stop.
        _ = eventuallyBlocking(timeout: .seconds(5), interval: .milliseconds(5)) { server.requestsInFlight > 0 }
        let response = DispatchQueue.global().sync { () -> Bool in
            let group = DispatchGroup()
            nonisolated(unsafe) var drained = false
            group.enter()
            DispatchQueue.global().async { drained = server.shutdown(deadlineSeconds: 5); group.leave() }
            let answer = client.readResponse()
            group.wait()
            return drained && answer?.status == 200
        }
        #expect(response)
        #expect(RawHTTPClient(port: port) == nil, "still accepting after shutdown")
    }

    @Test func longRequestsRunOnThePoolWhileProbesAnswer() throws {
        let responder = PoolResponder()
        let server = try startServer(responder) { $0.workers = 1; $0.workerQueue = 1 }
        let slow = (0..<2).map { _ in RawHTTPClient(port: server.port) }
        for client in slow { client?.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n") }
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { server.workerLoad >= 2 }
        #expect(server.workerLoad == 2)
        // One running, one queued: a third long request is refused at once.
        let third = try #require(RawHTTPClient(port: server.port))
        third.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try #require(third.readResponse())
        #expect(refused.status == 503)
        #expect(refused.header("retry-after") == "1")
        // Probes are answered by the I/O threads while the pool is full.
        for _ in 0..<5 {
            let probe = try #require(RawHTTPClient(port: server.port))
            probe.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(probe.readResponse()?.status == 200)
            #expect(server.workerLoad == 2, "a probe finished while the slow ones still ran")
        }
        responder.release()
        for client in slow { #expect(client?.readResponse()?.status == 200) }
    }

    @Test func aJobIsReleasedOnceItHasRun() throws {
        final class Payload: Sendable {}
        let pool = try WorkerPool(workers: 1, queueLimit: 4)
        defer { pool.stop() }
        let ran = Atomic<Int>(0)
        weak var tracked: Payload?
        do {
            let payload = Payload()
            tracked = payload
            #expect(pool.submit { withExtendedLifetime(payload) { _ = ran.add(1, ordering: .relaxed) } })
        }
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { ran.load(ordering: .relaxed) > 0 && pool.load == 0 }
        #expect(ran.load(ordering: .relaxed) == 1)
        #expect(tracked == nil, "the pool still holds a job that has run (and the request it captured)")
    }

    /// Long work runs nicer than the I/O threads, so a probe never waits for its time slice.
    @Test func workersRunNicerThanTheProcess() throws {
        let pool = try WorkerPool(workers: 1, queueLimit: 1)
        defer { pool.stop() }
        let here = pg_thread_nice()
        let seen = Atomic<Int32>(-100)
        #expect(pool.submit { seen.store(pg_thread_nice(), ordering: .relaxed) })
        var waited = 0
        while seen.load(ordering: .relaxed) == -100 && waited < 400 { usleep(5_000); waited += 1 }
        #expect(here != -100)
        #expect(seen.load(ordering: .relaxed) == min(19, here + WorkerPool.niceness))
    }

    @Test func theHeapIsTrimmedAfterABigRequestOnceThePoolIsIdle() throws {
        let responder = PoolResponder()
        let server = try startServer(responder) { $0.workers = 1; $0.maxBodyBytes = 1 << 20 }
        func post(_ bytes: Int) throws -> Int? {
            let client = try #require(RawHTTPClient(port: server.port))
            client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(bytes)\r\n\r\n" + String(repeating: "x", count: bytes))
            return client.readResponse()?.status
        }
        func waitForTrims(_ count: Int) {
            _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { server.heapTrims >= count }
        }
        #expect(try post(1000) == 200)
        usleep(50_000)
        #expect(server.heapTrims == 0, "a small request was followed by a trim")
        // Idle pool: a big request is followed by one trim.
        #expect(try post(300 * 1024) == 200)
        waitForTrims(1)
        #expect(server.heapTrims == 1)
        // While long work runs, a big request does not trim; the trim follows once it ends.
        let slow = try #require(RawHTTPClient(port: server.port))
        slow.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { responder.started.load(ordering: .relaxed) > 0 }
        #expect(try post(300 * 1024) == 200)
        usleep(100_000)
        #expect(server.heapTrims == 1, "the heap was trimmed while the pool was busy")
        responder.release()
        #expect(slow.readResponse()?.status == 200)
        waitForTrims(2)
        #expect(server.heapTrims == 2)
    }

    @Test func aStopAnswersQueuedLongRequestsAndLetsTheRunningOneFinish() throws {
        let responder = PoolResponder()
        let server = try startServer(responder) { $0.workers = 1; $0.workerQueue = 4 }
        let running = try #require(RawHTTPClient(port: server.port))
        running.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { responder.started.load(ordering: .relaxed) > 0 }
        let queued = try #require(RawHTTPClient(port: server.port))
        queued.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { server.workerLoad >= 2 }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { responder.release() }
        #expect(server.shutdown(deadlineSeconds: 5))
        #expect(queued.readResponse()?.status == 503)
        #expect(running.readResponse()?.status == 200)
        #expect(responder.started.load(ordering: .relaxed) == 1, "the queued request ran after the stop")
    }

    @Test func aStopPastItsDeadlineAnswersTheRunningLongRequest() throws {
        let responder = PoolResponder()
        let server = try startServer(responder) { $0.workers = 1 }
        let running = try #require(RawHTTPClient(port: server.port))
        running.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = eventuallyBlocking(timeout: .seconds(2), interval: .milliseconds(5)) { responder.started.load(ordering: .relaxed) > 0 }
        #expect(!server.shutdown(deadlineSeconds: 0.2))
        #expect(running.readResponse()?.status == 503)
        responder.release()
    }

    @Test func refusesAnAddressThatIsNotALiteral() {
        #expect(throws: HTTPServerError.self) {
            _ = try startServer { $0.host = "example.com" }
        }
    }

    @Test func loopbackDetection() {
        #expect(HTTPServerConfiguration(host: "127.0.0.1").isLoopback)
        #expect(HTTPServerConfiguration(host: "::1").isLoopback)
        #expect(!HTTPServerConfiguration(host: "0.0.0.0").isLoopback)
    }
}
