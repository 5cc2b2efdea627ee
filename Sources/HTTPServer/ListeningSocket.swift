#if canImport(Glibc)
import Glibc
#endif

/// The server's listening socket: bound, listening, non-blocking. The fd is handed to
/// `ConnectionGate`, which closes it when it stops.
struct ListeningSocket {
    let fd: Int32
    let port: Int
    let isIPv6: Bool

    init(host: String, port: Int) throws(HTTPServerError) {
        guard let address = SocketAddress(host: host, port: port) else {
            throw HTTPServerError(code: .invalidAddress, message: "listen address \(host) is not an IPv4 or IPv6 literal")
        }
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw HTTPServerError(code: .startFailed, message: "cannot create a socket: \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let length = socklen_t(address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = address.withSockaddr { bind(fd, $0, length) }
        guard bound == 0, listen(fd, 511) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HTTPServerError(code: .startFailed, message: "cannot listen on \(host):\(port): \(reason)")
        }
        var storage = sockaddr_storage()
        var storageLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &storageLength) }
        }
        let boundPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            address.isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: boundPort))
        self.isIPv6 = address.isIPv6
    }
}

/// A bindable IPv4 or IPv6 address.
struct SocketAddress {
    var storage = sockaddr_storage()
    var isIPv6 = false

    init?(host: String, port: Int) {
        guard port >= 0 && port <= 65535 else { return nil }
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { dst in
                withUnsafeBytes(of: v4) { dst.copyMemory(from: $0) }
            }
            return
        }
        var v6 = sockaddr_in6()
        let bare = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { dst in
                withUnsafeBytes(of: v6) { dst.copyMemory(from: $0) }
            }
            isIPv6 = true
            return
        }
        return nil
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }
}
