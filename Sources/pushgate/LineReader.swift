#if canImport(Glibc)
import Glibc
#endif

/// Splits a file descriptor's bytes into lines with `read(2)` in fixed-size chunks, so
/// memory stays flat whatever the input: a line longer than `maxLineBytes` is counted
/// and skipped up to its LF, never held.
struct LineReader {
    enum Line {
        /// The line's bytes without the LF and without one trailing CR.
        case text(ArraySlice<UInt8>)
        /// A line over the limit: its length in bytes (without LF and trailing CR).
        case tooLong(byteCount: Int)
    }

    struct ReadError: Error {
        let errno: Int32
        var message: String { String(cString: strerror(errno)) }
    }

    let fd: Int32
    let maxLineBytes: Int
    var chunkSize = 1 << 16

    /// Calls `body` once per line, in order. A final line without LF counts; empty input
    /// gives no lines.
    func forEachLine(_ body: (Line) -> Void) throws(ReadError) {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var line: [UInt8] = []
        line.reserveCapacity(maxLineBytes + 1)
        var discarded = 0          // > 0 while skipping an over-long line
        var endsWithCR = false     // of the line being skipped
        var sawBytes = false       // anything since the last LF

        func finishLine() {
            if discarded > 0 {
                body(.tooLong(byteCount: discarded - (endsWithCR ? 1 : 0)))
            } else {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                body(.text(line[...]))
            }
            line.removeAll(keepingCapacity: true)
            discarded = 0
            endsWithCR = false
            sawBytes = false
        }

        func take(_ bytes: ArraySlice<UInt8>) {
            guard !bytes.isEmpty else { return }
            sawBytes = true
            if discarded == 0 && line.count + bytes.count <= maxLineBytes {
                line.append(contentsOf: bytes)
                return
            }
            // Over the limit: keep counting, drop what was held.
            discarded += line.count + bytes.count
            endsWithCR = bytes.last == UInt8(ascii: "\r")
            line.removeAll(keepingCapacity: true)
        }

        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadError(errno: errno)
            }
            if n == 0 { break }
            var start = 0
            while start < n, let lf = chunk[start..<n].firstIndex(of: UInt8(ascii: "\n")) {
                take(chunk[start..<lf])
                finishLine()
                start = lf + 1
            }
            take(chunk[start..<n])
        }
        if sawBytes { finishLine() }
    }
}
