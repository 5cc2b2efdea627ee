/// Memory for the immutable tables the canonicaliser reads for every link: arrays of
/// plain values copied once into blocks this object owns (freed in deinit) and handed out
/// as buffer pointers, so that reading them on the hot path retains and releases nothing.
/// The pointers are valid as long as the object lives; whoever holds them keeps it.
final class FrozenMemory: @unchecked Sendable {  // blocks only grow while the owner is built
    private var blocks: [UnsafeMutableRawPointer] = []

    init() {}

    deinit {
        for block in blocks { block.deallocate() }
    }

    /// A copy of `values`, which must be plain values (no references).
    func copy<T>(_ values: [T]) -> UnsafeBufferPointer<T> {
        precondition(_isPOD(T.self), "frozen memory holds plain values only")
        let block = UnsafeMutableBufferPointer<T>.allocate(capacity: max(values.count, 1))
        _ = block.initialize(from: values)
        blocks.append(UnsafeMutableRawPointer(block.baseAddress!))
        return UnsafeBufferPointer(rebasing: block[0..<values.count])
    }

    /// The UTF-8 of `text`.
    func bytes(_ text: String) -> UnsafeBufferPointer<UInt8> { copy(Array(text.utf8)) }
}
