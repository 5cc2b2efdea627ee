/// A bounded byte writer over caller-provided memory.
struct CanonicalWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// Writes stop at the end of the buffer (the count still grows, so the caller can see
    /// the overflow): a sizing mistake can never write past the memory it was given.
    @inline(__always)
    mutating func append(_ c: UInt8) {
        if count < buffer.count { buffer[count] = c }
        count += 1
    }

    var overflowed: Bool { count > buffer.count }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let dst = room(for: bytes.count), let src = bytes.baseAddress {
            dst.update(from: src, count: bytes.count)
            count += bytes.count
            return
        }
        for c in bytes { append(c) }
    }

    /// Where the next `n` bytes go, if they fit (the caller then writes them unchecked and
    /// advances `count`); nil when they might not, and the checked appends must be used.
    @inline(__always)
    func room(for n: Int) -> UnsafeMutablePointer<UInt8>? {
        guard n <= buffer.count - count, let base = buffer.baseAddress else { return nil }
        return base + count
    }

    mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { append($0) }
    }
}
