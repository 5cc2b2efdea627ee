/// Writes compact JSON into a byte buffer, in exactly the order it is told (so output is
/// deterministic). Strings are escaped for safety as well as validity: every character
/// `TextSafety.isUnsafe` names is written as `\uXXXX`.
///
/// Objects and arrays are written with `object { }` / `array { }` (or `beginObject()` …
/// `endObject()`), members with `member(_:_:)` or `key(_:)` followed by one value. The
/// writer puts the commas in: it remembers whether the current object or array already
/// holds something, so callers never write separators or quotes by hand.
///
/// ```swift
/// var w = JSONWriter()
/// w.object { w in
///     w.member("ok", true)
///     w.key("error")
///     w.object { w in w.member("code", code); w.member("message", message) }
/// }
/// // {"ok":true,"error":{"code":"…","message":"…"}}
/// ```
public struct JSONWriter: Sendable {
    @usableFromInline var storage: [UInt8]
    /// Everything written so far.
    public var bytes: [UInt8] { storage }
    /// True right after a value at the current level: the next value or key needs a comma.
    /// False at the start, after `{`, `[` or a key.
    @usableFromInline var needsComma = false

    public init(capacity: Int = 256) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// How many bytes are written.
    @inlinable public var count: Int { storage.count }

    public var string: String { String(decoding: storage, as: UTF8.self) }

    /// Empties the buffer, keeping its capacity (for writers reused line after line).
    @inlinable
    public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    @inlinable
    public mutating func beginObject() {
        separate()
        storage.append(UInt8(ascii: "{"))
        needsComma = false
    }

    @inlinable
    public mutating func endObject() {
        storage.append(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable
    public mutating func beginArray() {
        separate()
        storage.append(UInt8(ascii: "["))
        needsComma = false
    }

    @inlinable
    public mutating func endArray() {
        storage.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `{`, the members `body` writes, `}`.
    @inlinable
    public mutating func object(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginObject()
        try body(&self)
        endObject()
    }

    /// `[`, the elements `body` writes, `]`.
    @inlinable
    public mutating func array(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginArray()
        try body(&self)
        endArray()
    }

    /// An array with one element per item, written by `element`.
    @inlinable
    public mutating func array<S: Sequence>(_ items: S, _ element: (inout JSONWriter, S.Element) throws -> Void) rethrows {
        beginArray()
        for item in items { try element(&self, item) }
        endArray()
    }

    /// A member's key; the next value written is its value. `name` must be plain ASCII
    /// needing no escape (every key the program writes is such a literal).
    @inlinable
    public mutating func key(_ name: StaticString) {
        separate()
        storage.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { name in
            assert(name.allSatisfy(Self.isPlain), "a literal key must need no escape")
            storage.append(contentsOf: name)
        }
        storage.append(UInt8(ascii: "\""))
        storage.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A member's key taken from data (a parameter name, a state name): escaped.
    @inlinable @_disfavoredOverload
    public mutating func key(_ name: String) {
        separate()
        Self.appendQuoted(name, to: &storage)
        storage.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A key given as UTF-8 bytes (valid UTF-8): escaped.
    @inlinable
    public mutating func key(utf8 name: UnsafeBufferPointer<UInt8>) {
        separate()
        storage.append(UInt8(ascii: "\""))
        Self.appendEscaped(utf8: name, to: &storage)
        storage.append(UInt8(ascii: "\""))
        storage.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    @inlinable
    public mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &storage)
        needsComma = true
    }

    /// A string value given as UTF-8 bytes (valid UTF-8), escaped like `string(_:)`.
    @inlinable
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        storage.append(UInt8(ascii: "\""))
        Self.appendEscaped(utf8: value, to: &storage)
        storage.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A string value written from pieces: `body` appends the text's UTF-8 bytes between
    /// the quotes, through `appendEscaped` (or bytes it knows need no escape).
    @inlinable
    public mutating func string(pieces body: (inout [UInt8]) throws -> Void) rethrows {
        separate()
        storage.append(UInt8(ascii: "\""))
        try body(&storage)
        storage.append(UInt8(ascii: "\""))
        needsComma = true
    }

    @inlinable
    public mutating func int(_ value: Int) {
        separate()
        Self.appendDecimal(value, to: &storage)
        needsComma = true
    }

    /// A finite double in Swift's shortest round-tripping form; NaN and infinities, which
    /// JSON cannot hold, are written as `null`.
    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite { storage.append(contentsOf: value.description.utf8) } else { storage.append(contentsOf: "null".utf8) }
        needsComma = true
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separate()
        if value {
            storage.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            storage.append(contentsOf: [UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e")])
        }
        needsComma = true
    }

    @inlinable
    public mutating func null() {
        separate()
        storage.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        needsComma = true
    }

    /// A number already in JSON syntax (from the parser, or digits the caller formatted).
    public mutating func number(_ text: String) {
        separate()
        storage.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// A complete JSON value already serialised (a stored body, a prebuilt fragment),
    /// copied as it is.
    @inlinable
    public mutating func serialized(_ json: [UInt8]) {
        separate()
        storage.append(contentsOf: json)
        needsComma = true
    }

    /// Writes a whole JSON value, members in their stored order.
    public mutating func value(_ json: JSON) {
        switch json {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let text): number(text)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { value(item) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object.members {
                key(member.key)
                value(member.value)
            }
            endObject()
        }
    }

    // MARK: Members (a key and its value)

    @inlinable public mutating func member(_ name: StaticString, _ value: String) { key(name); string(value) }
    @inlinable public mutating func member(_ name: StaticString, _ value: Int) { key(name); int(value) }
    @inlinable public mutating func member(_ name: StaticString, _ value: Bool) { key(name); bool(value) }
    @inlinable public mutating func member(_ name: StaticString, _ value: Double) { key(name); double(value) }
    public mutating func member(_ name: StaticString, _ value: JSON) { key(name); self.value(value) }

    /// The member with `null` when the value is missing (use `if let` to leave it out).
    @inlinable public mutating func member(_ name: StaticString, orNull value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    @inlinable public mutating func member(_ name: StaticString, orNull value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    @inlinable public mutating func member(_ name: StaticString, orNull value: Double?) {
        key(name)
        if let value { double(value) } else { null() }
    }

    /// A member whose value is an object written by `body`.
    @inlinable
    public mutating func member(_ name: StaticString, object body: (inout JSONWriter) throws -> Void) rethrows {
        key(name)
        try object(body)
    }

    /// A member whose value is an array written by `body`.
    @inlinable
    public mutating func member(_ name: StaticString, array body: (inout JSONWriter) throws -> Void) rethrows {
        key(name)
        try array(body)
    }

    // MARK: Raw text

    /// Text copied as it is, with no separator logic: for precomputed layouts that know
    /// their own commas. After it the writer assumes no comma is due.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { storage.append(contentsOf: $0) }
        needsComma = false
    }

    /// Like `raw(_:)`, for bytes.
    @inlinable
    public mutating func raw(_ text: [UInt8]) {
        storage.append(contentsOf: text)
        needsComma = false
    }

    public mutating func rawBytes(_ text: String) {
        storage.append(contentsOf: text.utf8)
        needsComma = false
    }

    public mutating func byte(_ b: UInt8) {
        storage.append(b)
        needsComma = false
    }

    @inlinable
    mutating func separate() {
        if needsComma { storage.append(UInt8(ascii: ",")) }
    }

    // MARK: Static helpers

    /// `"text"` with JSON and safety escapes, as a String.
    public static func quoted(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// One JSON value as compact text.
    public static func serialize(_ json: JSON) -> String {
        var w = JSONWriter()
        w.value(json)
        return w.string
    }

    /// One value written by `body`, as bytes.
    @inlinable
    public static func bytes(capacity: Int = 256, _ body: (inout JSONWriter) throws -> Void) rethrows -> [UInt8] {
        var w = JSONWriter(capacity: capacity)
        try body(&w)
        return w.bytes
    }

    @usableFromInline static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    @inlinable
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// The inside of a JSON string: `value` escaped exactly as `appendQuoted` does, without
    /// the quotes (for writers that build one string value from several pieces).
    @inlinable
    public static func appendEscaped(_ value: String, to out: inout [UInt8]) {
        if value.utf8.withContiguousStorageIfAvailable({ appendEscaped(utf8: $0, to: &out) }) != nil { return }
        var copy = value
        copy.withUTF8 { appendEscaped(utf8: $0, to: &out) }
    }

    /// The escaper itself, over valid UTF-8. Runs of plain printable ASCII (no `"`, no `\`)
    /// are copied in one block; only the bytes between runs are looked at one by one.
    @inlinable
    public static func appendEscaped(utf8 input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard let base = input.baseAddress else { return }
        let count = input.count
        var i = 0
        var runStart = 0
        while i < count {
            // The common case: 8 plain bytes at a time.
            while i + 8 <= count, isPlainWord(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) { i += 8 }
            while i < count, isPlain(base[i]) { i += 1 }
            if i > runStart { out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart)) }
            if i == count { return }
            i = appendEscapedScalar(base, at: i, count: count, to: &out)
            runStart = i
        }
    }

    @inlinable @inline(__always)
    static func isPlain(_ b: UInt8) -> Bool {
        b >= 0x20 && b < 0x7F && b != 0x22 && b != 0x5C
    }

    /// True when none of the 8 bytes is below 0x20, 0x7F or above, `"` or `\`
    /// (the usual has-a-byte bit tricks, exact because no byte has its high bit set).
    @inlinable @inline(__always)
    static func isPlainWord(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        if w & high != 0 { return false }
        func hasByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & high != 0 }
        return !((w &- ones &* 0x20) & high != 0   // a byte < 0x20 (bytes are < 0x80 here)
                 || hasByte(w ^ (ones &* 0x22)) || hasByte(w ^ (ones &* 0x5C))
                 || (w &+ ones) & high != 0)           // a byte of 0x7F
    }

    /// Escapes the one character at `i` (not plain ASCII); returns the index after it.
    @usableFromInline
    static func appendEscapedScalar(_ base: UnsafePointer<UInt8>, at i: Int, count: Int, to out: inout [UInt8]) -> Int {
        let b = base[i]
        switch b {
        case 0x22: out.append(0x5C); out.append(0x22); return i + 1
        case 0x5C: out.append(0x5C); out.append(0x5C); return i + 1
        case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n")); return i + 1
        case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r")); return i + 1
        case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t")); return i + 1
        case ..<0x80:  // the other controls and DEL
            appendUnicodeEscape(Unicode.Scalar(b), to: &out)
            return i + 1
        default: break
        }
        // A multi-byte scalar (the input is valid UTF-8; a truncated tail is copied as is).
        let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
        guard i + length <= count else {
            out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: count - i))
            return count
        }
        var value = UInt32(b) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { value = value << 6 | (UInt32(base[i + k]) & 0x3F) }
        if let scalar = Unicode.Scalar(value), TextSafety.isUnsafe(scalar) {
            appendUnicodeEscape(scalar, to: &out)
        } else {
            out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: length))
        }
        return i + length
    }

    /// Decimal digits of `value`, without going through a String.
    @inlinable
    public static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value >= 0 && value < 10 { out.append(UInt8(ascii: "0") &+ UInt8(value)); return }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = 0
            while magnitude > 0 {
                digits[19 - n] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - n)...]))
        }
    }

    static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        func unit(_ u: UInt32) {
            out.append(0x5C)
            out.append(UInt8(ascii: "u"))
            out.append(hexDigits[Int((u >> 12) & 0xF)])
            out.append(hexDigits[Int((u >> 8) & 0xF)])
            out.append(hexDigits[Int((u >> 4) & 0xF)])
            out.append(hexDigits[Int(u & 0xF)])
        }
        let v = scalar.value
        if v > 0xFFFF {
            let x = v - 0x10000
            unit(0xD800 + (x >> 10))
            unit(0xDC00 + (x & 0x3FF))
        } else {
            unit(v)
        }
    }

    static func appendUnicodeEscape(_ scalar: Unicode.Scalar, to out: inout String) {
        var bytes: [UInt8] = []
        appendUnicodeEscape(scalar, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}
