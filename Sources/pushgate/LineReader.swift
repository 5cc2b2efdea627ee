#if canImport(Glibc)
import Glibc
#endif

/// Splits a file descriptor's bytes into lines with `read(2)` in big blocks, so memory
/// stays flat whatever the input: a line longer than `maxLineBytes` is counted and
/// skipped up to its LF, never held. Lines are handed out in place, straight from the
/// block they were read into (only a line cut by a block's end is moved, to the front).
struct LineReader {
    enum Line {
        /// The line's bytes without the LF and without one trailing CR; valid only during
        /// the call that receives it.
        case text(UnsafeBufferPointer<UInt8>)
        /// A line over the limit: its length in bytes (without LF and trailing CR).
        case tooLong(byteCount: Int)
    }

    struct ReadError: Error {
        let errno: Int32
        var message: String { String(cString: strerror(errno)) }
    }

    let fd: Int32
    let maxLineBytes: Int
    var blockSize = 1 << 18

    /// Calls `body` once per line, in order. A final line without LF counts; empty input
    /// gives no lines.
    func forEachLine(_ body: (Line) -> Void) throws(ReadError) {
        // Room for a held partial line (at most maxLineBytes) plus a whole block.
        let capacity = blockSize + maxLineBytes + 1
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var held = 0               // buffer[0..<held]: the start of the current line
        var discarded = 0          // > 0 while skipping an over-long line: its bytes so far
        var endsWithCR = false     // of the line being skipped

        // The raw line (CR included) is what the limit applies to, as when it was held.
        func emit(_ start: Int, _ end: Int) {
            let length = end - start
            let cut = length > 0 && buffer[end - 1] == cr ? 1 : 0
            if discarded > 0 {
                let total = discarded + length
                body(.tooLong(byteCount: total - (length > 0 ? cut : (endsWithCR ? 1 : 0))))
                discarded = 0
                endsWithCR = false
            } else if length > maxLineBytes {
                body(.tooLong(byteCount: length - cut))
            } else {
                body(.text(UnsafeBufferPointer(start: buffer + start, count: length - cut)))
            }
        }

        while true {
            let n = Glibc.read(fd, buffer + held, capacity - held)
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadError(errno: errno)
            }
            if n == 0 { break }
            let end = held + n
            var start = 0
            var from = held  // the held bytes hold no LF
            while from < end, let found = memchr(buffer + from, Int32(lf), end - from) {
                let at = buffer.distance(to: found.assumingMemoryBound(to: UInt8.self))
                emit(start, at)
                start = at + 1
                from = start
            }
            let rest = end - start
            if discarded > 0 || rest > maxLineBytes {
                // Over the limit: keep counting, hold nothing.
                if rest > 0 {
                    discarded += rest
                    endsWithCR = buffer[end - 1] == cr
                }
                held = 0
            } else {
                if start > 0 && rest > 0 { memmove(buffer, buffer + start, rest) }
                held = rest
            }
        }
        if held > 0 || discarded > 0 { emit(0, held) }
    }
}
