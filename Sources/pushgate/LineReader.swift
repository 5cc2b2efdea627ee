#if canImport(Glibc)
import Glibc
#endif
import StrictJSON

/// `read(2)` on a file descriptor as a `LineReader`'s source; a failed read (other than an
/// interrupted one) is a `ByteReadError` with the system's reason.
struct FileDescriptorSource: ByteSource {
    let fd: Int32

    mutating func read(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(ByteReadError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw ByteReadError(String(cString: strerror(errno)))
        }
    }
}
