/// Limits that keep a slow, idle or greedy client from holding the server.
public struct HTTPServerConfiguration: Sendable, Equatable {
    /// IPv4 or IPv6 literal to bind (`127.0.0.1`, `::1`, `0.0.0.0`).
    public var host: String
    /// 0 picks a free port (tests).
    public var port: Int
    public var maxBodyBytes: Int
    public var connectionLimit: Int
    public var perIPConnectionLimit: Int
    /// Idle seconds before a connection is closed (also bounds a slow sender).
    public var connectionTimeoutSeconds: Int
    public var threads: Int
    /// Threads for requests the responder says run long (`HTTPResponder.runsLong`).
    public var workers: Int
    /// Long requests that may wait for a worker; one more is answered 503 at once.
    public var workerQueue: Int
    /// Threads for work handed off to wait on another host (`HTTPResponse.handOff`).
    public var upstreamWorkers: Int
    /// Hand-offs that may wait for an upstream worker; one more gets its `busy` answer.
    public var upstreamQueue: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, maxBodyBytes: Int = 1 << 20,
                connectionLimit: Int = 1024, perIPConnectionLimit: Int = 256,
                connectionTimeoutSeconds: Int = 30, threads: Int = 2, workers: Int = 2, workerQueue: Int = 32,
                upstreamWorkers: Int = 4, upstreamQueue: Int = 8) {
        self.workers = workers
        self.upstreamWorkers = upstreamWorkers
        self.upstreamQueue = upstreamQueue
        self.workerQueue = workerQueue
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.threads = threads
    }

    /// True for addresses only this machine can reach.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        case invalidAddress
        case startFailed
    }

    public var code: Code
    public var message: String

    public var description: String { message }
}
