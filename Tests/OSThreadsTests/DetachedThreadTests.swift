import Glibc
import OSThreads
import Synchronization
import Testing

@Suite struct DetachedThreadTests {
    /// The body runs on a thread of its own, which carries the name (cut to Linux's 15
    /// bytes) while it runs.
    @Test func runsTheBodyOnANamedThreadOfItsOwn() async throws {
        let seen = Mutex<(ran: Bool, name: String, sameThread: Bool)?>(nil)
        let caller = UInt(pthread_self())
        #expect(DetachedThread.start(name: "pushgate.detached-test") {
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = fd >= 0 ? read(fd, &buffer, 32) : 0
            if fd >= 0 { close(fd) }
            let name = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingSuffixNewline
            seen.withLock { $0 = (true, name, UInt(pthread_self()) == caller) }
        })
        for _ in 0..<500 where seen.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(10)) }
        let result = try #require(seen.withLock { $0 })
        #expect(result.ran)
        #expect(result.name == "pushgate.detach")
        #expect(!result.sameThread)
    }
}

private extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
