#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for a long-running loop (transport workers, HTTP workers, the
/// dispatcher, webhook, retention and readiness loops): a detached POSIX thread, without
/// Foundation's `Thread`, whose use would link all of Foundation into the binary and cost
/// every command's start-up. Names are kept within Linux's 15 bytes (`pg-dispatcher`).
public enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (cut to the 15 bytes Linux keeps,
    /// as `top` and `ps` show it). False when the system gives no thread.
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(ThreadBody(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, threadEntry, context) == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

private final class ThreadBody: Sendable {
    let name: String
    let run: @Sendable () -> Void

    init(name: String, run: @escaping @Sendable () -> Void) {
        self.name = name
        self.run = run
    }

    /// Through /proc/thread-self/comm: Glibc's module does not export pthread_setname_np.
    /// A name that cannot be set leaves the thread unnamed, nothing more.
    func nameThisThread() {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

private let threadEntry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { argument in
    let body = Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue()
    body.nameThisThread()
    body.run()
    return nil
}
