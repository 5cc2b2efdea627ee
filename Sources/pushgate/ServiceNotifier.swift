#if canImport(Glibc)
import Glibc
#endif
import StrictJSON

/// systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram of
/// `KEY=VALUE` lines to the AF_UNIX socket `$NOTIFY_SOCKET` names — a file-system path, or
/// an abstract name when it starts with `@` (sent with a leading NUL byte instead). A
/// process not started by systemd as `Type=notify` has no variable, and every call does
/// nothing.
struct ServiceNotifier: Sendable {
    /// `$NOTIFY_SOCKET` as given; nil: nobody listens.
    let socketName: String?

    init(environment: [String: String] = processEnvironment()) {
        socketName = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`, newline-separated). Nil when it
    /// was sent or there is nowhere to send it; otherwise why not (the caller logs it: the
    /// service runs on, and systemd's start timeout reports a READY=1 that never came).
    @discardableResult
    func notify(_ state: String) -> String? {
        guard let name = socketName else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        guard abstract || path.first == UInt8(ascii: "/") else {
            return "NOTIFY_SOCKET \(TextSafety.quoted(name)) is neither an absolute path nor an abstract socket name (@…)"
        }
        if abstract { path[0] = 0 }
        // A path needs room for its terminating NUL; an abstract name is counted, not terminated.
        let room = MemoryLayout.size(ofValue: address.sun_path) - (abstract ? 0 : 1)
        guard path.count <= room else {
            return "NOTIFY_SOCKET \(TextSafety.quoted(name)) is longer than a socket address (\(room) bytes)"
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))

        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "cannot notify systemd: socket: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        guard sent == message.count else {
            return "cannot notify systemd at NOTIFY_SOCKET \(TextSafety.quoted(name)): \(sent < 0 ? String(cString: strerror(errno)) : "short write")"
        }
        return nil
    }
}
