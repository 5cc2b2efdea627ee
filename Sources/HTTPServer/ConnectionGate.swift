#if canImport(Glibc)
import Glibc
#endif
internal import CLinuxShims
import Synchronization
import Timing

/// The server's own accept path. Each new connection waits here until its first request
/// head has arrived; the head is read with MSG_PEEK (nothing is consumed) and checked by
/// `RequestHeadCheck`. A valid head hands the socket to libmicrohttpd, which then reads
/// the same bytes; a bad one gets the refusal written here, the connection is closed,
/// and libmicrohttpd never sees it. One thread, one epoll set, edge-triggered (a peek
/// leaves the socket readable, so level-triggering would spin).
final class ConnectionGate: @unchecked Sendable {
    // @unchecked: `waiting` and `perAddress` are only touched on the gate's thread;
    // the rest is immutable or atomic.
    struct Limits {
        var connections: Int
        var perAddress: Int
        /// Seconds a client has to send its whole first head.
        var headSeconds: Int
    }

    private struct Waiting {
        var address: sockaddr_storage
        var addressLength: socklen_t
        var addressText: String
        var deadline: Double
        /// After a refusal: reading (and dropping) what the client still sends, so the
        /// close does not reset the connection before the answer is read.
        var draining = false
        /// Part of a head has arrived: closing now leaves a request unanswered.
        var started = false
    }

    private let listenFD: Int32
    private let epollFD: Int32
    private let wakeFD: Int32
    private let limits: Limits
    private let clock: any TimeSource
    private let check: RequestHeadCheck
    private let handOver: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool
    private let refuse: (FramingViolation, String) -> [UInt8]
    private let abandoned: (String) -> Void
    private var waiting: [Int32: Waiting] = [:]
    private var perAddress: [String: Int] = [:]
    private var thread: pthread_t?
    private let stopping = Atomic<Bool>(false)
    /// Sockets other threads hand back to be drained and closed (`drainThenClose`).
    private let handedBack = Mutex<[Int32]>([])
    /// Kept-alive connections libmicrohttpd serves that are waiting for their next
    /// request head, with the time it must have arrived by (`awaitHead`). The lock is
    /// held while a late one is shut down, and libmicrohttpd's close notification takes
    /// it too (`forgetHead`), so a descriptor is never shut down after it was closed.
    private let laterHeads = Mutex<[Int32: Double]>([:])

    /// Takes ownership of `listenFD` (bound and listening).
    init(listenFD: Int32, limits: Limits, check: RequestHeadCheck, clock: any TimeSource,
         handOver: @escaping (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool,
         refuse: @escaping (FramingViolation, String) -> [UInt8],
         abandoned: @escaping (String) -> Void) throws(HTTPServerError) {
        self.listenFD = listenFD
        self.clock = clock
        self.limits = limits
        self.check = check
        self.handOver = handOver
        self.refuse = refuse
        self.abandoned = abandoned
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard epollFD >= 0, wakeFD >= 0 else {
            throw HTTPServerError(code: .startFailed, message: "cannot create the accept loop: \(String(cString: strerror(errno)))")
        }
        add(listenFD, events: EPOLLIN.rawValue)
        add(wakeFD, events: EPOLLIN.rawValue)
        var created = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&created, nil, { argument in
            let gate = Unmanaged<ConnectionGate>.fromOpaque(argument!).takeRetainedValue()
            gate.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ConnectionGate>.fromOpaque(context).release()
            throw HTTPServerError(code: .startFailed, message: "cannot start the accept thread")
        }
        thread = created
    }

    /// Stops accepting at once (the listening socket is closed) and closes connections
    /// still waiting for their head. Returns when the thread has ended.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    deinit {
        close(epollFD)
        close(wakeFD)
    }

    /// Takes a socket whose answer was written and whose writing side is shut: what the
    /// client still sends is read and dropped for up to two seconds, then it is closed.
    /// Closing at once with unread input would reset the connection, and a client can
    /// lose an answer it has not read yet. Any thread; after a stop it closes at once.
    func drainThenClose(_ fd: Int32) {
        let taken = handedBack.withLock { list -> Bool in
            guard !stopping.load(ordering: .acquiring) else { return false }
            list.append(fd)
            return true
        }
        guard taken else {
            close(fd)
            return
        }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// A kept-alive connection finished a request: its next head must arrive whole within
    /// the seconds the first head had. libmicrohttpd's own timeout is an idle timeout,
    /// which a client sending one byte a second never reaches. Any thread.
    func awaitHead(_ fd: Int32) {
        let deadline = clock.monotonicSeconds() + Double(limits.headSeconds)
        laterHeads.withLock { $0[fd] = deadline }
    }

    /// The awaited head arrived, or the connection is closing (libmicrohttpd's threads).
    func forgetHead(_ fd: Int32) {
        _ = laterHeads.withLock { $0.removeValue(forKey: fd) }
    }

    /// Shuts down connections whose awaited head is late; libmicrohttpd then reads the end
    /// of the stream and closes them (and the unfinished request is logged there).
    private func expireLaterHeads(now: Double) {
        laterHeads.withLock { heads in
            for (fd, deadline) in heads where deadline <= now {
                shutdown(fd, Int32(SHUT_RDWR))
                heads[fd] = nil
            }
        }
    }

    private func add(_ fd: Int32, events: UInt32) {
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var buffer = [UInt8](repeating: 0, count: check.maxHeadBytes + 1)
        while !stopping.load(ordering: .acquiring) {
            let count = epoll_wait(epollFD, &events, Int32(events.count), 250)
            let now = clock.monotonicSeconds()
            if count > 0 {
                for event in events[0..<Int(count)] {
                    let fd = event.data.fd
                    if fd == wakeFD {
                        var count: UInt64 = 0
                        _ = read(wakeFD, &count, 8)
                        takeHandedBack(now: now)
                        continue
                    }
                    if fd == listenFD { acceptAll(now: now); continue }
                    examine(fd, buffer: &buffer)
                }
            }
            expire(now: now)
            expireLaterHeads(now: now)
        }
        close(listenFD)
        for fd in waiting.keys { close(fd) }
        waiting.removeAll()
        for fd in handedBack.withLock({ list in defer { list.removeAll() }; return list }) { close(fd) }
    }

    private func takeHandedBack(now: Double) {
        for fd in handedBack.withLock({ list in defer { list.removeAll() }; return list }) {
            waiting[fd] = Waiting(address: sockaddr_storage(), addressLength: 0, addressText: "", deadline: now + 2,
                                  draining: true)
            add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
            drain(fd)
        }
    }

    private func acceptAll(now: Double) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listenFD, $0, &length)
                }
            }
            if fd < 0 {
                if errno == EINTR { continue }
                return  // EAGAIN, or out of descriptors: try again on the next event
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let text = addressText(address)
            if waiting.count >= limits.connections || perAddress[text, default: 0] >= limits.perAddress {
                close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            waiting[fd] = Waiting(address: address, addressLength: length, addressText: text,
                                  deadline: now + Double(limits.headSeconds))
            perAddress[text, default: 0] += 1
            add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
        }
    }

    private func examine(_ fd: Int32, buffer: inout [UInt8]) {
        guard let entry = waiting[fd] else { return }
        if entry.draining {
            drain(fd)
            return
        }
        let peeked = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
        if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR) {
            if entry.started { abandoned(entry.addressText) }
            forget(fd)
            return
        }
        guard peeked > 0 else { return }
        let outcome = buffer.withUnsafeBytes { check.check(UnsafeRawBufferPointer(rebasing: $0[0..<peeked])) }
        switch outcome {
        case .incomplete:
            waiting[fd]?.started = true
            return
        case .complete:
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            release(fd)
            var address = entry.address
            let length = entry.addressLength
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { handOver(fd, $0, length) }
            }
        case .rejected(let violation):
            let answer = refuse(violation, entry.addressText)
            answer.withUnsafeBytes { raw in
                _ = send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
            shutdown(fd, Int32(SHUT_WR))
            waiting[fd]?.draining = true
            // Bounded: whatever arrives within two seconds is dropped, then the close.
            waiting[fd]?.deadline = clock.monotonicSeconds() + 2
            drain(fd)
        }
    }

    private func drain(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN { return }
            forget(fd)
            return
        }
    }

    private func expire(now: Double) {
        for (fd, entry) in waiting where entry.deadline <= now {
            if entry.started && !entry.draining { abandoned(entry.addressText) }
            forget(fd)
        }
    }

    /// Removes a connection from the gate's books; the socket stays open (handed over).
    private func release(_ fd: Int32) {
        guard let entry = waiting.removeValue(forKey: fd) else { return }
        let left = (perAddress[entry.addressText] ?? 1) - 1
        perAddress[entry.addressText] = left > 0 ? left : nil
    }

    private func forget(_ fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        release(fd)
        close(fd)
    }
}

/// "127.0.0.1", "::1"; empty for other families.
func addressText(_ storage: sockaddr_storage) -> String {
    var storage = storage
    let family = storage.ss_family
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    withUnsafePointer(to: &storage) { pointer in
        if family == sa_family_t(AF_INET) {
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var address = v4.pointee.sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
        } else if family == sa_family_t(AF_INET6) {
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var address = v6.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            }
        }
    }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
