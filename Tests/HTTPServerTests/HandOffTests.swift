import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import HTTPServer

/// `/wait` hands off from an I/O thread, `/slow-wait` from a worker; both wait on the
/// upstream pool until released. Everything else is answered at once.
final class HandOffResponder: HTTPResponder {
    let waiting = Atomic<Int>(0)
    let workerAnswers = Atomic<Int>(0)
    private let gate = DispatchSemaphore(value: 0)
    private let released = Atomic<Bool>(false)

    func release() {
        released.store(true, ordering: .relaxed)
        for _ in 0..<16 { gate.signal() }
    }

    func runsLong(_ request: HTTPRequest) -> Bool { request.path.hasPrefix("/slow") }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.path.hasSuffix("wait") else { return HTTPResponse(status: 200, body: Array(request.path.utf8)) }
        if request.path == "/slow-wait" { workerAnswers.add(1, ordering: .relaxed) }
        return .handOff({ [self] in
            waiting.add(1, ordering: .relaxed)
            if !released.load(ordering: .relaxed) { _ = gate.wait(timeout: .now() + 10) }
            return HTTPResponse(status: 200, body: Array("waited \(request.path)".utf8))
        }, busy: { HTTPResponse(status: 503, headers: [("Retry-After", "5")], body: Array("busy".utf8)) })
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
    func shuttingDown(_ request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 503, headers: [("Connection", "close")]) }
}

@Suite struct HandOffTests {
    @Test func handOffsWaitOnTheUpstreamPoolWhileIOThreadsAndWorkersServeOthers() throws {
        let responder = HandOffResponder()
        let server = try startServer(responder) { $0.threads = 1; $0.workers = 1; $0.workerQueue = 0; $0.upstreamWorkers = 1; $0.upstreamQueue = 1 }
        // One from the I/O thread (running), one from a worker (queued behind it).
        let first = try #require(RawHTTPClient(port: server.port))
        first.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventuallyBlocking(timeout: .seconds(5), interval: .milliseconds(5)) { responder.waiting.load(ordering: .relaxed) == 1 })
        let second = try #require(RawHTTPClient(port: server.port))
        second.send("GET /slow-wait HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventuallyBlocking(timeout: .seconds(5), interval: .milliseconds(5)) { server.upstreamLoad == 2 })
        #expect(server.workerLoad == 0, "the worker let go once it handed off")

        // The single I/O thread and the single worker are free for everyone else.
        let probe = try #require(RawHTTPClient(port: server.port))
        probe.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(probe.readResponse()?.status == 200)
        let long = try #require(RawHTTPClient(port: server.port))
        long.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(long.readResponse()?.bodyText == "/slow")

        // The upstream pool runs one and queues one: a third hand-off gets its busy answer at once.
        let third = try #require(RawHTTPClient(port: server.port))
        third.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        let busy = try #require(third.readResponse())
        #expect(busy.status == 503 && busy.bodyText == "busy" && busy.header("retry-after") == "5")

        responder.release()
        #expect(first.readResponse()?.bodyText == "waited /wait")
        #expect(second.readResponse()?.bodyText == "waited /slow-wait")
        #expect(responder.workerAnswers.load(ordering: .relaxed) == 1)
    }

    @Test func aStopAnswersAHandOffStillQueued() throws {
        let responder = HandOffResponder()
        let server = try startServer(responder) { $0.upstreamWorkers = 1; $0.upstreamQueue = 4 }
        let running = try #require(RawHTTPClient(port: server.port))
        running.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventuallyBlocking(timeout: .seconds(5), interval: .milliseconds(5)) { responder.waiting.load(ordering: .relaxed) == 1 })
        let queued = try #require(RawHTTPClient(port: server.port))
        queued.send("GET /slow-wait HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventuallyBlocking(timeout: .seconds(5), interval: .milliseconds(5)) { server.upstreamLoad == 2 })
        // A thread of its own: Dispatch's shared pool can be taken by other tests' blocking waits.
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.3); responder.release() }
        #expect(server.shutdown(deadlineSeconds: 5))
        #expect(queued.readResponse()?.status == 503)
        #expect(running.readResponse()?.bodyText == "waited /wait")
        #expect(responder.waiting.load(ordering: .relaxed) == 1, "the queued hand-off ran after the stop")
    }
}
