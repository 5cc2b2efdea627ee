#if canImport(Glibc)
import Glibc
#endif
@testable import APNs
@testable import CurlClient

// What only tests ask of the key's token manager and of the transport, kept out of the
// production modules (read through `@testable import`).

extension ProviderTokenManager {
    /// How many tokens this manager has signed.
    var mintedCount: Int { state.withLock { $0.minted } }
}

extension CurlHTTP2Transport {
    /// Transport threads still running.
    var runningThreads: Int { workers.filter { !$0.hasEnded }.count }

    /// Requests put back in the transport's queue (a lost connection, a refused stream).
    var requeuedRequests: Int { total(\.requeued) }
}
