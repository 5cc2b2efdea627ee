import APNsCore
@testable import APNs
import Testing
@testable import CurlClient

@Suite struct ReasonAndRetryTests {
    @Test func everyDocumentedReasonMapsBothWays() {
        #expect(APNsReason.documented.count == 39)
        for entry in APNsReason.documented {
            #expect(APNsReason(entry.string) == entry.reason)
            #expect(entry.reason.rawValue == entry.string)
        }
        #expect(Set(APNsReason.documented.map(\.string)).count == 39)
        #expect(APNsReason("NewReason2027") == .unknown("NewReason2027"))
        #expect(APNsReason.unknown("NewReason2027").rawValue == "NewReason2027")
    }

    @Test func onlyTransientAnswersAreRetried() {
        let policy = RetryPolicy()
        #expect(policy.isRetryable(status: 429, reason: .tooManyRequests))
        #expect(policy.isRetryable(status: 500, reason: .internalServerError))
        #expect(policy.isRetryable(status: 503, reason: .serviceUnavailable))
        #expect(policy.isRetryable(status: 503, reason: .shutdown))
        #expect(!policy.isRetryable(status: 429, reason: .tooManyProviderTokenUpdates))
        for entry in APNsReason.documented where entry.status < 429 {
            #expect(!policy.isRetryable(status: entry.status, reason: entry.reason))
        }
    }

    @Test func backoffDoublesWithBoundedJitterAndHonoursRetryAfter() {
        let policy = RetryPolicy(maxAttempts: 6, baseBackoffMilliseconds: 100, maxBackoffMilliseconds: 1000)
        #expect(policy.delayMilliseconds(afterAttempt: 1, retryAfterSeconds: nil, unit: 0) == 50)
        #expect(policy.delayMilliseconds(afterAttempt: 1, retryAfterSeconds: nil, unit: 0.999) == 99)
        #expect(policy.delayMilliseconds(afterAttempt: 2, retryAfterSeconds: nil, unit: 0) == 100)
        #expect(policy.delayMilliseconds(afterAttempt: 3, retryAfterSeconds: nil, unit: 0.5) == 300)
        #expect(policy.delayMilliseconds(afterAttempt: 10, retryAfterSeconds: nil, unit: 0.999) <= 1000)
        #expect(policy.delayMilliseconds(afterAttempt: 60, retryAfterSeconds: nil, unit: 0) == 500)
        #expect(policy.delayMilliseconds(afterAttempt: 1, retryAfterSeconds: 3, unit: 0.5) == 3000)
    }
}

@Suite struct CircuitBreakerTests {
    @Test func opensAfterTheThresholdProbesWithBackoffAndClosesOnSuccess() {
        var breaker = CircuitBreaker(threshold: 3, firstProbeMilliseconds: 1_000, maxProbeMilliseconds: 4_000)
        let opened = [breaker.recordFailure(now: 10), breaker.recordFailure(now: 20), breaker.recordFailure(now: 30)]
        #expect(opened == [false, false, true], "the third failure in a row opens it")
        #expect(breaker.isOpen && !breaker.probeDue(now: 500) && breaker.probeDue(now: 1_030), "a probe a second later")
        breaker.recordFailure(now: 1_100)
        #expect(!breaker.probeDue(now: 3_000) && breaker.probeDue(now: 3_100), "the next two seconds after the failed one")
        breaker.recordFailure(now: 3_200)
        breaker.recordFailure(now: 3_300)
        #expect(breaker.probeAt == 3_300 + 4_000, "capped")
        breaker.recordSuccess()
        #expect(!breaker.isOpen && !breaker.probeDue(now: 10_000))
    }

    @Test func aSuccessBeforeTheThresholdStartsTheCountOver() {
        var breaker = CircuitBreaker(threshold: 2)
        breaker.recordFailure(now: 0)
        breaker.recordSuccess()
        let opened = breaker.recordFailure(now: 1)
        #expect(!opened && !breaker.isOpen)
    }
}
