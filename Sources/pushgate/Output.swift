#if canImport(Glibc)
import Glibc
#endif
import StrictJSON

/// Buffered writes to stdout and stderr. Everything the CLI prints goes through here so
/// large outputs (JSON Lines over millions of links) are written in big blocks.
enum Output {
    enum Stream { case stdout, stderr }

    nonisolated(unsafe) private static var buffer: [UInt8] = {
        var b: [UInt8] = []
        b.reserveCapacity(1 << 16)
        return b
    }()

    static func write(_ text: String, to stream: Stream = .stdout) {
        switch stream {
        case .stdout:
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { flush() }
        case .stderr:
            flush()
            writeAll(Array(text.utf8), fd: 2)
        }
    }

    static func writeBytes(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Bytes too big to be worth buffering: what is buffered goes first, then these,
    /// written straight from the caller's memory.
    static func writeBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        flush()
        writeAll(bytes, fd: 1)
    }

    static func line(_ text: String) { write(text + "\n") }

    /// To stderr, with a newline unless `terminated` is false (text that ends in one).
    static func error(_ text: String, terminated: Bool = true) { write(terminated ? text + "\n" : text, to: .stderr) }

    static func flush() {
        guard !buffer.isEmpty else { return }
        writeAll(buffer, fd: 1)
        buffer.removeAll(keepingCapacity: true)
    }

    private static func writeAll(_ bytes: [UInt8], fd: Int32) {
        bytes.withUnsafeBufferPointer { writeAll($0, fd: fd) }
    }

    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, fd: Int32) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return  // EPIPE: the reader went away; nothing more to do
            }
            offset += n
        }
    }
}
