#if canImport(Glibc)
import Glibc
#endif

/// A deliberately primitive HTTP/1.1 client over a raw socket, so tests can be a slow,
/// idle or misbehaving client, which no real client library will agree to be.
public final class RawHTTPClient {
    public let fd: Int32

    public init?(port: Int, host: String = "127.0.0.1") {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: a failing init of a fully initialised class still runs deinit,
        // and a second close could hit a descriptor another thread (libmicrohttpd) was
        // given in between, which it then fails to close and aborts the test process.
        guard connected == 0 else { return nil }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Reads until the peer closes or a full response (by Content-Length) has arrived.
    public func readResponse() -> RawResponse? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let response = RawResponse(parsing: data) { return response }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return RawResponse(parsing: data) }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    /// Everything the server sends until it closes the connection; `closed` is false if
    /// it was still open after `seconds`.
    public func readUntilClose(seconds: Int) -> (bytes: [UInt8], closed: Bool) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 { return (data, true) }
            if errno == EINTR { continue }
            return (data, errno == ECONNRESET)
        }
    }

    /// True if the server closed the connection (reads end of file) within the timeout.
    public func waitForClose(seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}

public struct RawResponse {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// Bytes of `data` this response took (head and body).
    public var length: Int
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
        length = body.count
    }

    public init?(parsing data: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = data.indices.first(where: { i in i + 4 <= data.count && Array(data[i..<i + 4]) == separator }) else {
            return nil
        }
        let head = String(decoding: data[..<end], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        self.status = status
        headers = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " "))
        }
        let bodyStart = end + 4
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        guard data.count >= bodyStart + length else { return nil }
        body = Array(data[bodyStart..<bodyStart + length])
        self.length = bodyStart + length
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}

extension RawHTTPClient {
    /// One request on a fresh connection: method, path, headers, body → the response.
    public static func exchange(port: Int, method: String, path: String, headers: [(String, String)] = [],
                                body: [UInt8] = []) -> RawResponse? {
        guard let client = RawHTTPClient(port: port) else { return nil }
        // Host: 127.0.0.1 unless the caller gives its own.
        let host = headers.contains { $0.0.lowercased() == "host" } ? "" : "Host: 127.0.0.1\r\n"
        var head = "\(method) \(path) HTTP/1.1\r\n\(host)Connection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        client.send(Array(head.utf8) + body)
        return client.readResponse()
    }
}
