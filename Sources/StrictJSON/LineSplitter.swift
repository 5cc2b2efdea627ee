#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for cutting bytes into lines, shared by every line reader (device lists,
/// `check-link --stdin`, NDJSON campaigns, keys read from standard input): a line ends at
/// LF, one CR before the LF is not part of it, a last line without LF counts, and empty
/// input has no lines. Nothing else is trimmed here; what a line means is its reader's
/// business.
public enum LineSplitter {
    /// The first line of `bytes[start...]` that ends with an LF: the range of its text
    /// (without LF and trailing CR) and where the next line starts; nil when no LF follows.
    @inlinable
    public static func line(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (text: Range<Int>, next: Int)? {
        guard let lf = firstLineFeed(in: bytes, from: start) else { return nil }
        return (start..<textEnd(bytes, start, lf), lf + 1)
    }

    /// The text of the last line when the input ends without an LF at `bytes[start...]`;
    /// nil when nothing is left.
    @inlinable
    public static func lastLine(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        start < bytes.count ? start..<textEnd(bytes, start, bytes.count) : nil
    }

    /// Every line of `bytes`, in order.
    @inlinable
    public static func forEachLine<E: Error>(in bytes: UnsafeBufferPointer<UInt8>,
                                             _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        var start = 0
        while let (text, next) = line(in: bytes, from: start) {
            try body(UnsafeBufferPointer(rebasing: bytes[text]))
            start = next
        }
        if let text = lastLine(in: bytes, from: start) { try body(UnsafeBufferPointer(rebasing: bytes[text])) }
    }

    /// Every line of a small whole input (a lock file, `/etc/os-release`), as text
    /// (invalid UTF-8 shown as U+FFFD).
    public static func lines(of bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        bytes.withUnsafeBufferPointer { buffer in
            forEachLine(in: buffer) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        return lines
    }

    @inlinable @inline(__always)
    static func textEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int {
        end > start && bytes[end - 1] == 0x0D ? end - 1 : end
    }

    /// The index of the first LF at or after `start`: the C library's `memchr`, which
    /// reads many bytes per instruction (a line is usually scanned once, so this is most
    /// of a splitter's work).
    @inlinable
    public static func firstLineFeed(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count else { return nil }
        guard let found = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}

/// One line from a `LineReader`.
public enum ByteLine {
    /// The line's bytes without the LF and without one trailing CR; valid only until the
    /// reader is asked for the next line.
    case text(UnsafeBufferPointer<UInt8>)
    /// A line over the reader's limit: its length in bytes (without LF and trailing CR).
    /// Its bytes were counted and skipped, never held.
    case tooLong(byteCount: Int)
}

/// A failed read: the message says why (`Is a directory`, `Input/output error`).
public struct ByteReadError: Error, Equatable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// Where a `LineReader` gets its bytes: a file descriptor in the program, anything in a
/// test. `read` fills a prefix of `buffer` and returns its length, 0 at the end of input.
public protocol ByteSource {
    mutating func read(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(ByteReadError) -> Int
}

/// Lines from a byte source, read in big blocks so memory stays flat whatever the input:
/// a line longer than `maxLineBytes` is counted and skipped up to its LF, never held.
/// Lines are handed out in place, straight from the block they were read into (only a line
/// cut by a block's end is moved, to the front). A read error is an error, never the end
/// of the input: the lines before it have been handed out, and nothing after it is.
///
/// A non-copyable struct owning its buffer (freed in deinit): its state lives in the
/// caller's frame, so the per-line path has no class access checks or generic layout.
public struct LineReader: ~Copyable {
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    public let maxLineBytes: Int
    private var filled = 0        // buffer[0..<filled] holds read bytes
    private var position = 0      // where the next line starts
    private var scanned = 0       // buffer[position..<scanned] holds no LF
    private var discarded = 0     // > 0 while skipping an over-long line: its bytes so far
    private var discardedEndsWithCR = false
    private var atEnd = false
    private var failed: ByteReadError?
    private var source: any ByteSource
    /// Bytes read from the source so far.
    public private(set) var bytesRead = 0
    /// Lines handed out so far (the number of the last one).
    public private(set) var lineNumber = 0

    public init(_ source: some ByteSource, maxLineBytes: Int, blockSize: Int = 1 << 18) {
        self.source = source
        self.maxLineBytes = maxLineBytes
        // Room for a held partial line (at most maxLineBytes) plus a whole block.
        capacity = blockSize + maxLineBytes + 1
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// The next line, or nil at the end of the input. After a read error every call throws
    /// it again.
    public mutating func next() throws(ByteReadError) -> ByteLine? {
        while true {
            let bytes = UnsafeBufferPointer(start: buffer, count: filled)
            if let lf = LineSplitter.firstLineFeed(in: bytes, from: scanned) {
                let start = position
                position = lf + 1
                scanned = position
                return emit(start, lf)
            }
            if let failed { throw failed }
            scanned = filled
            if atEnd {
                guard position < filled || discarded > 0 else { return nil }
                let start = position
                position = filled
                return emit(start, filled)
            }
            try refill()
        }
    }

    /// Moves the unfinished line to the front (or drops it while skipping) and reads.
    private mutating func refill() throws(ByteReadError) {
        let rest = filled - position
        if discarded > 0 || rest > maxLineBytes {
            // Over the limit: keep counting, hold nothing.
            if rest > 0 {
                discarded += rest
                discardedEndsWithCR = buffer[filled - 1] == 0x0D
            }
            filled = 0
        } else {
            if position > 0 && rest > 0 { buffer.moveInitialize(from: buffer + position, count: rest) }
            filled = rest
        }
        position = 0
        scanned = filled
        do {
            let n = try source.read(into: UnsafeMutableBufferPointer(start: buffer + filled, count: capacity - filled))
            if n == 0 { atEnd = true } else { filled += n; bytesRead += n }
        } catch {
            failed = error
            throw error
        }
    }

    /// The line `buffer[start..<end]` (LF excluded). The limit applies to the raw line, CR
    /// included, whether it was held or skipped.
    private mutating func emit(_ start: Int, _ end: Int) -> ByteLine {
        lineNumber += 1
        let length = end - start
        let cut = length > 0 && buffer[end - 1] == 0x0D ? 1 : 0
        if discarded > 0 {
            let total = discarded + length
            let endsWithCR = length > 0 ? cut == 1 : discardedEndsWithCR
            discarded = 0
            discardedEndsWithCR = false
            return .tooLong(byteCount: total - (endsWithCR ? 1 : 0))
        }
        if length > maxLineBytes { return .tooLong(byteCount: length - cut) }
        return .text(UnsafeBufferPointer(start: buffer + start, count: length - cut))
    }
}
