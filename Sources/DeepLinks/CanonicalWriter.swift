/// A bounded byte writer over caller-provided memory.
struct CanonicalWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

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
        for c in bytes { append(c) }
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        for c in bytes { append(c) }
    }

    mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { append($0) }
    }
}
