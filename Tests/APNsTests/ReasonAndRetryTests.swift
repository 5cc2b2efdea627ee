import APNs
import Testing

@Suite struct ReasonAndRetryTests {
    @Test func everyDocumentedReasonMapsBothWays() {
        #expect(APNsReason.documented.count == 32)
        for entry in APNsReason.documented {
            #expect(APNsReason(entry.string) == entry.reason)
            #expect(entry.reason.rawValue == entry.string)
        }
        #expect(Set(APNsReason.documented.map(\.string)).count == 32)
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
