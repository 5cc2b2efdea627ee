#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Storage
import Synchronization

/// A few connections to one database, handed out one caller at a time. A connection that
/// broke (the server restarted, the network dropped) is replaced on its next use, so the
/// pool heals as soon as the database answers again.
final class PGPool: Sendable {
    struct Settings: Sendable {
        var url: String
        var password: String?
        var size: Int
        var connectTimeoutSeconds: Int
    }

    let settings: Settings
    private let idle: Mutex<[Handle]>
    private let slots: DispatchSemaphore

    /// A connection owned by the pool; sendable because only one caller holds it at a time.
    final class Handle: @unchecked Sendable {
        var connection: PGConnection?
        init(_ connection: PGConnection?) { self.connection = connection }
    }

    /// Opens the first connection at once (so a wrong URL or password fails start-up); the
    /// others when first needed.
    init(_ settings: Settings) throws(StorageError) {
        self.settings = settings
        let first = try PGConnection(url: settings.url, password: settings.password, connectTimeoutSeconds: settings.connectTimeoutSeconds)
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
            handle.connection = try PGConnection(url: settings.url, password: settings.password,
                                                 connectTimeoutSeconds: settings.connectTimeoutSeconds)
        }
        return try body(handle.connection!)
    }
}
