/// A `ValueType` as the hot path tests it: a plain value (a kind and, for `oneOf`, its
/// values as bytes in frozen memory), so that checking a value copies no enum payload and
/// retains nothing. It accepts exactly what `ValueType.accepts(safeBytes:)` accepts.
struct ValueCheck {
    enum Kind: UInt8 { case int, uuid, slug, string, oneOf }

    let kind: Kind
    /// The values of a `oneOf` (empty otherwise).
    let choices: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>

    init(_ type: ValueType, in memory: FrozenMemory) {
        switch type {
        case .int: kind = .int
        case .uuid: kind = .uuid
        case .slug: kind = .slug
        case .string: kind = .string
        case .oneOf: kind = .oneOf
        }
        if case .oneOf(let values) = type {
            choices = memory.copy(values.map { memory.bytes($0) })
        } else {
            choices = UnsafeBufferPointer(start: nil, count: 0)
        }
    }

    /// Whether decoded bytes (valid UTF-8, free of forbidden characters) have this type.
    @inline(__always)
    func accepts(safeBytes bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch kind {
        case .int: return ValueType.isInt(bytes)
        case .uuid: return ValueType.isUUID(bytes)
        case .slug: return ValueType.isSlug(bytes)
        case .string: return ValueType.isShortEnough(bytes)
        case .oneOf:
            for choice in choices where Bytes.equal(choice, bytes) { return true }
            return false
        }
    }
}
