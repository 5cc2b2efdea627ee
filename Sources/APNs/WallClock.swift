#if canImport(Glibc)
import Glibc
#endif

/// Seconds since 1970, injectable so tests can move time (token age, `iat`).
public protocol WallClock: Sendable {
    func secondsSince1970() -> Int64
}

public struct SystemWallClock: WallClock {
    public init() {}
    public func secondsSince1970() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }
}
