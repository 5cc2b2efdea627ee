import HTTPServer
import Testing
@testable import Gateway
import Timing

/// Which requests leave the I/O threads: work that plans or stores campaigns runs on the
/// worker pool (channel calls hand their wait for Apple to the upstream pool instead).
@Suite struct LongRequestRoutingTests {
    @Test func liveActivityUpdatesAndEndsRunOnTheWorkerPool() throws {
        let service = try makeService()
        func runsLong(_ method: String, _ path: String) -> Bool { service.runsLong(HTTPRequest(method: method, path: path)) }
        #expect(runsLong("POST", "/v1/live-activities/match-1/update"))
        #expect(runsLong("POST", "/v1/live-activities/match-1/end"))
        #expect(runsLong("POST", "/v1/campaigns") && runsLong("POST", "/v1/notifications/preview"))
        #expect(runsLong("PUT", "/v1/campaigns/c0ffee00-0000-4000-8000-000000000000/parts/7"), "a part checks and stores up to maxBodyBytes of tokens")
        #expect(runsLong("POST", "/v1/campaigns/c0ffee00-0000-4000-8000-000000000000/start"))
        #expect(!runsLong("POST", "/v1/campaigns/c0ffee00-0000-4000-8000-000000000000/pause"))
        #expect(!runsLong("POST", "/v1/live-activities/tokens"), "a registration is one short write")
        #expect(!runsLong("GET", "/v1/live-activities/match-1/update"))
        #expect(!runsLong("GET", "/healthz") && !runsLong("GET", "/v1/channels"))
    }
}
