import StrictJSON

/// The type of a path parameter or query value. Values are checked after
/// percent-decoding.
public enum ValueType: Sendable, Equatable {
    /// ASCII digits, 1–18 of them, no sign, no leading zero unless the value is `0`.
    case int
    /// 8-4-4-4-12 hex digits; canonicalised to lowercase.
    case uuid
    /// `[a-z0-9-]{1,64}`
    case slug
    /// 1–256 Unicode scalars, none of them whitespace, control, bidi or format characters.
    case string
    /// Exactly one of these values (case-sensitive).
    case oneOf([String])

    /// The name used in messages and in the table: `int`, `uuid`, … or `one of [a, b]`.
    public var displayName: String {
        switch self {
        case .int: return "int"
        case .uuid: return "uuid"
        case .slug: return "slug"
        case .string: return "string"
        case .oneOf(let values): return "one of [" + values.map { TextSafety.quoted($0) }.joined(separator: ", ") + "]"
        }
    }

    public static let maxStringScalars = 256
    public static let maxSlugLength = 64
    public static let maxIntDigits = 18

    /// Whether a decoded value has this type.
    public func accepts(_ value: String) -> Bool {
        var copy = value
        return copy.withUTF8 { bytes in
            if case .string = self { return Self.isSafeString(bytes) }
            return accepts(safeBytes: bytes)
        }
    }

    var isUUID: Bool {
        if case .uuid = self { return true }
        return false
    }

    /// The value as the canonical form carries it (a uuid in lowercase; others unchanged).
    /// Only meaningful for values this type accepts.
    public func canonicalValue(_ value: String) -> String {
        isUUID ? value.lowercased() : value
    }

    /// Whether decoded bytes have this type, when they are already known to be valid
    /// UTF-8 free of forbidden characters (the canonicaliser checked them on the way in).
    @inline(__always)
    func accepts(safeBytes bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch self {
        case .int: return Self.isInt(bytes)
        case .uuid: return Self.isUUID(bytes)
        case .slug: return Self.isSlug(bytes)
        case .string: return Self.isShortEnough(bytes)
        case .oneOf(let values):
            for value in values where value.utf8.count == bytes.count && value.utf8.elementsEqual(bytes) { return true }
            return false
        }
    }

    /// Why a value was refused, for messages: "must be an int (1–18 digits, …)".
    var requirement: String {
        switch self {
        case .int: return "an int (1–18 ASCII digits, no sign, no leading zero)"
        case .uuid: return "a uuid (8-4-4-4-12 hex digits)"
        case .slug: return "a slug (1–64 of a-z, 0-9, -)"
        case .string: return "a string (1–256 characters)"
        case .oneOf: return displayName
        }
    }

    static func isInt(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count >= 1, b.count <= maxIntDigits else { return false }
        if b.count > 1 && b[0] == UInt8(ascii: "0") { return false }
        for c in b where c < 0x30 || c > 0x39 { return false }
        return true
    }

    static func isUUID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let dash = UInt8(ascii: "-")
        guard b.count == 36, b[8] == dash, b[13] == dash, b[18] == dash, b[23] == dash else { return false }
        // The 32 digits as four words (8, 4 + 4, 4 + 4, 8 bytes), tested eight at a time.
        let p = UnsafeRawPointer(b.baseAddress!)
        func half(_ offset: Int) -> UInt64 { UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) }
        func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        return allHexDigits(word(0)) && allHexDigits(half(9) | half(14) << 32)
            && allHexDigits(half(19) | half(24) << 32) && allHexDigits(word(28))
    }

    /// True when the eight bytes of `w` are all ASCII hex digits.
    @inline(__always)
    static func allHexDigits(_ w: UInt64) -> Bool {
        if w & ByteWord.high != 0 { return false }
        let letters = w | ByteWord.ones &* 0x20  // a-f and A-F alike (digits keep their case bit)
        return ByteWord.inRange(w, 0x30, 10) | ByteWord.inRange(letters, 0x61, 6) == ByteWord.high
    }

    static func isSlug(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count >= 1, b.count <= maxSlugLength else { return false }
        for c in b {
            let ok = (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-")
            if !ok { return false }
        }
        return true
    }

    /// 1–256 scalars, counted as the bytes that start one (valid UTF-8 assumed).
    static func isShortEnough(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !b.isEmpty, b.count <= 4 * maxStringScalars else { return false }
        if b.count <= maxStringScalars { return true }
        var scalars = 0
        for c in b where c & 0xC0 != 0x80 { scalars += 1 }
        return scalars <= maxStringScalars
    }

    /// 1–256 scalars, none unsafe or whitespace. The bytes must be valid UTF-8.
    static func isSafeString(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !b.isEmpty else { return false }
        var scalars = 0
        var i = 0
        while i < b.count {
            guard let (scalar, length) = UTF8Scalar.decode(b, at: i) else { return false }
            if ForbiddenCharacters.contains(scalar) { return false }
            scalars += 1
            if scalars > maxStringScalars { return false }
            i += length
        }
        return true
    }
}
