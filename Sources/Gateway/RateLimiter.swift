import Synchronization
import Timing

/// A token bucket: `burst` requests at once, refilled at `perSecond`.
public struct RateLimit: Sendable, Equatable {
    public var perSecond: Double
    public var burst: Double

    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// Per-key token buckets. The clock is injected so tests control time. With
/// `maxEntries`, buckets that have refilled are forgotten once there are more than that
/// many (keys chosen by clients, such as their addresses, cannot grow it without bound).
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let buckets = Mutex<[String: Bucket]>([:])
    private let clock: any TimeSource
    private let maxEntries: Int

    public init(clock: any TimeSource, maxEntries: Int = .max) {
        self.clock = clock
        self.maxEntries = maxEntries
    }

    /// Buckets held now.
    var entries: Int { buckets.withLock { $0.count } }

    /// What `take` would decide, without taking.
    public func check(key: String, limit: RateLimit) -> Decision {
        let time = clock.monotonicSeconds()
        return buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return .allowed }
            let tokens = min(limit.burst, bucket.tokens + max(0, time - bucket.updated) * limit.perSecond)
            if tokens >= 1 { return .allowed }
            return .limited(retryAfterSeconds: max(1, Int(((1 - tokens) / max(limit.perSecond, 1e-9)).rounded(.up))))
        }
    }

    public enum Decision: Sendable, Equatable {
        case allowed
        case limited(retryAfterSeconds: Int)
    }

    public func take(key: String, limit: RateLimit) -> Decision {
        let time = clock.monotonicSeconds()
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: time)
            bucket.tokens = min(limit.burst, bucket.tokens + max(0, time - bucket.updated) * limit.perSecond)
            bucket.updated = time
            defer {
                buckets[key] = bucket
                if buckets.count > maxEntries {
                    buckets = buckets.filter { min(limit.burst, $0.value.tokens + (time - $0.value.updated) * limit.perSecond) < limit.burst }
                    if buckets.count > maxEntries { buckets = [key: bucket] }
                }
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return .allowed
            }
            let wait = (1 - bucket.tokens) / max(limit.perSecond, 1e-9)
            return .limited(retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
    }
}
