#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Storage
import Synchronization
import Timing

/// A few connections to one database, handed out one caller at a time. A connection that
/// broke (the server restarted, the network dropped) is replaced on its next use, so the
/// pool heals as soon as the database answers again. After a failed connect, callers get
/// `unavailable` at once (no connect timeout to sit through) until the backoff has passed:
/// 0.25 s doubling to 5 s, with jitter.
final class PGPool: Sendable {
    struct Settings: Sendable {
        var url: String
        var password: String?
        var size: Int
        var connectTimeoutSeconds: Int
        var limits: PGSessionLimits = .standard
        var clock: any TimeSource
    }

    let settings: Settings
    private let idle: Mutex<[Handle]>
    private let slots: DispatchSemaphore
    private let backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(5), jitter: 0.5)
    /// Failed connects in a row, the time the next may be tried, and the last failure.
    private let outage = Mutex<(failures: Int, retryAt: Double, last: StorageError?)>((0, 0, nil))

    /// A connection owned by the pool; sendable because only one caller holds it at a time.
    final class Handle: @unchecked Sendable {
        var connection: PGConnection?
        init(_ connection: PGConnection?) { self.connection = connection }
    }

    /// Opens the first connection at once (so a wrong URL or password fails start-up); the
    /// others when first needed.
    init(_ settings: Settings) throws(StorageError) {
        self.settings = settings
        let first = try PGConnection(url: settings.url, password: settings.password, connectTimeoutSeconds: settings.connectTimeoutSeconds,
                                              limits: settings.limits)
        idle = Mutex([Handle(first)] + (1..<max(1, settings.size)).map { _ in Handle(nil) })
        slots = DispatchSemaphore(value: max(1, settings.size))
    }

    /// Runs `body` on a healthy connection; a connection left broken or inside a
    /// transaction is dropped afterwards.
    func with<T>(_ body: (PGConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        slots.wait()
        let handle = idle.withLock { $0.removeLast() }
        defer {
            if let connection = handle.connection, !connection.isHealthy { handle.connection = nil }
            idle.withLock { $0.append(handle) }
            slots.signal()
        }
        if handle.connection == nil || handle.connection?.isHealthy == false {
            handle.connection = nil
            handle.connection = try connect()
        }
        return try body(handle.connection!)
    }

    private func connect() throws(StorageError) -> PGConnection {
        let now = settings.clock.monotonicSeconds()
        let (retryAt, last) = outage.withLock { ($0.retryAt, $0.last) }
        if let last, now < retryAt {
            throw StorageError(.unavailable, "\(last.message) (next attempt in \(Int(((retryAt - now) * 1000).rounded(.up))) ms)")
        }
        do throws(StorageError) {
            let connection = try PGConnection(url: settings.url, password: settings.password,
                                              connectTimeoutSeconds: settings.connectTimeoutSeconds,
                                              limits: settings.limits)
            outage.withLock { $0 = (0, 0, nil) }
            return connection
        } catch {
            outage.withLock { state in
                state.failures += 1
                let delay = backoff.delay(afterFailures: state.failures, unit: Backoff.randomUnit())
                state.retryAt = settings.clock.monotonicSeconds() + Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                state.last = error
            }
            throw error
        }
    }
}
