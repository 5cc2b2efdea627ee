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
///
/// The bytes live in the writer's own buffer (copied on write, like an array), so each
/// piece is one capacity check and a plain store: this is the hot path of link checking.
public struct JSONWriter: Sendable {
    @usableFromInline var buffer: JSONByteBuffer
    @usableFromInline var used = 0
    /// How many bytes are written.
    @inlinable public var count: Int { used }
    /// True right after a value at the current level: the next value or key needs a comma.
    /// False at the start, after `{`, `[` or a key.
    @usableFromInline var needsComma = false

    public init(capacity: Int = 256) {
        buffer = JSONByteBuffer(capacity: max(capacity, 16))
    }

    /// Everything written so far (a copy).
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Everything written so far, in place (for writing it out without a copy).
    @inlinable
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withExtendedLifetime(buffer) { try body(UnsafeBufferPointer(start: buffer.base, count: count)) }
    }

    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    /// Empties the buffer, keeping its capacity (for writers reused line after line).
    @inlinable
    public mutating func removeAll() {
        used = 0
        needsComma = false
    }

    /// Room for `extra` more bytes: where they go. The caller stores them and then
    /// advances `count` with `commit`.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(!isKnownUniquelyReferenced(&buffer) || extra > buffer.capacity - count) { grow(extra) }
        return buffer.base + count
    }

    @inlinable @inline(__always)
    mutating func commit(_ written: Int) { used += written }

    @usableFromInline
    mutating func grow(_ extra: Int) {
        let needed = count + extra
        let copy = JSONByteBuffer(capacity: max(needed, buffer.capacity * 2))
        copy.base.update(from: buffer.base, count: count)
        buffer = copy
    }

    /// Plain bytes, no separator logic.
    @inlinable @inline(__always)
    mutating func put(_ text: UnsafeBufferPointer<UInt8>) {
        let p = reserve(text.count)
        if let from = text.baseAddress { p.update(from: from, count: text.count) }
        commit(text.count)
    }

    @inlinable @inline(__always)
    mutating func put(_ b: UInt8) {
        let p = reserve(1)
        p.pointee = b
        commit(1)
    }

    /// A comma if one is due, then `"` + escaped text + `"`, then `suffix` if nonzero
    /// (the `:` after a key).
    @inlinable @inline(__always)
    mutating func putQuoted(_ text: UnsafeBufferPointer<UInt8>, suffix: UInt8 = 0) {
        let p = reserve(6 * text.count + 4)
        var o = 0
        if needsComma { p[0] = UInt8(ascii: ","); o = 1 }
        p[o] = UInt8(ascii: "\"")
        o += 1
        o += Self.escape(text, into: p + o)
        p[o] = UInt8(ascii: "\"")
        o += 1
        if suffix != 0 { p[o] = suffix; o += 1 }
        commit(o)
    }

    @inlinable @inline(__always)
    mutating func putQuoted(_ text: String, suffix: UInt8 = 0) {
        if text.utf8.withContiguousStorageIfAvailable({ putQuoted($0, suffix: suffix) }) != nil { return }
        var copy = text
        copy.withUTF8 { putQuoted($0, suffix: suffix) }
    }

    // MARK: Structure

    @inlinable
    public mutating func beginObject() { open(UInt8(ascii: "{")) }

    @inlinable
    public mutating func endObject() { close(UInt8(ascii: "}")) }

    @inlinable
    public mutating func beginArray() { open(UInt8(ascii: "[")) }

    @inlinable
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    @inlinable @inline(__always)
    mutating func open(_ bracket: UInt8) {
        let p = reserve(2)
        if needsComma { p[0] = UInt8(ascii: ","); p[1] = bracket; commit(2) } else { p[0] = bracket; commit(1) }
        needsComma = false
    }

    @inlinable @inline(__always)
    mutating func close(_ bracket: UInt8) {
        put(bracket)
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
        name.withUTF8Buffer { name in
            assert(name.allSatisfy(Self.isPlain), "a literal key must need no escape")
            let p = reserve(name.count + 4)
            var o = 0
            if needsComma { p[0] = UInt8(ascii: ","); o = 1 }
            p[o] = UInt8(ascii: "\"")
            if let from = name.baseAddress { (p + o + 1).update(from: from, count: name.count) }
            o += name.count + 1
            p[o] = UInt8(ascii: "\"")
            p[o + 1] = UInt8(ascii: ":")
            commit(o + 2)
        }
        needsComma = false
    }

    /// A member's key taken from data (a parameter name, a state name): escaped.
    @inlinable @_disfavoredOverload
    public mutating func key(_ name: String) {
        putQuoted(name, suffix: UInt8(ascii: ":"))
        needsComma = false
    }

    /// A key given as UTF-8 bytes (valid UTF-8): escaped.
    @inlinable
    public mutating func key(utf8 name: UnsafeBufferPointer<UInt8>) {
        putQuoted(name, suffix: UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    @inlinable
    public mutating func string(_ value: String) {
        putQuoted(value)
        needsComma = true
    }

    /// A string value given as UTF-8 bytes (valid UTF-8), escaped like `string(_:)`.
    @inlinable
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        putQuoted(value)
        needsComma = true
    }

    /// A string value written from pieces: `body` adds each piece of text with
    /// `escaped(_:)`, between the quotes this writes.
    @inlinable
    public mutating func string(pieces body: (inout JSONWriter) throws -> Void) rethrows {
        beginString()
        try body(&self)
        endString()
    }

    /// The opening quote of a string value written in pieces (`escaped(_:)`), for writers
    /// that cannot put the pieces in one closure (a layout with holes); `endString()`
    /// closes it.
    @inlinable
    public mutating func beginString() {
        separate()
        put(UInt8(ascii: "\""))
        needsComma = false
    }

    @inlinable
    public mutating func endString() {
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A piece of a string value (inside `string(pieces:)`): escaped, no quotes.
    @inlinable
    public mutating func escaped(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ escaped(utf8: $0) }) != nil { return }
        var copy = text
        copy.withUTF8 { escaped(utf8: $0) }
    }

    @inlinable
    public mutating func escaped(utf8 text: UnsafeBufferPointer<UInt8>) {
        let p = reserve(6 * text.count)
        commit(Self.escape(text, into: p))
    }

    @inlinable
    public mutating func int(_ value: Int) {
        let p = reserve(21)
        var o = 0
        if needsComma { p[0] = UInt8(ascii: ","); o = 1 }
        commit(o + Self.writeDecimal(value, into: p + o))
        needsComma = true
    }

    /// Timestamps and counts stored as Int64 (the same width as Int on every platform
    /// pushgate builds for).
    @inlinable
    public mutating func int(_ value: Int64) { int(Int(value)) }

    /// A finite double in Swift's shortest round-tripping form; NaN and infinities, which
    /// JSON cannot hold, are written as `null`.
    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite { putText(value.description) } else { putStatic("null") }
        needsComma = true
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separate()
        if value { putStatic("true") } else { putStatic("false") }
        needsComma = true
    }

    @inlinable
    public mutating func null() {
        separate()
        putStatic("null")
        needsComma = true
    }

    /// A number already in JSON syntax (from the parser, or digits the caller formatted).
    public mutating func number(_ text: String) {
        separate()
        putText(text)
        needsComma = true
    }

    /// A complete JSON value already serialised (a stored body, a prebuilt fragment),
    /// copied as it is.
    @inlinable
    public mutating func serialized(_ json: [UInt8]) {
        separate()
        json.withUnsafeBufferPointer { put($0) }
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
    @inlinable public mutating func member(_ name: StaticString, _ value: Int64) { key(name); int(value) }
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
    @inlinable
    public mutating func raw(_ text: StaticString) {
        putStatic(text)
        needsComma = false
    }

    /// Like `raw(_:)`, for bytes.
    @inlinable
    public mutating func raw(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { put($0) }
        needsComma = false
    }

    @inlinable
    public mutating func raw(_ text: UnsafeBufferPointer<UInt8>) {
        put(text)
        needsComma = false
    }

    public mutating func rawBytes(_ text: String) {
        putText(text)
        needsComma = false
    }

    /// Up to `maxBytes` bytes stored by `body` straight into the buffer (it returns how
    /// many it stored): for a hot layout that knows a bound for a whole line, so the
    /// capacity is checked once rather than once per piece. Like `raw(_:)`, no separator
    /// logic, and afterwards no comma is due.
    @inlinable
    public mutating func raw(maxBytes: Int, _ body: (UnsafeMutablePointer<UInt8>) throws -> Int) rethrows {
        let p = reserve(maxBytes)
        let written = try body(p)
        precondition(written >= 0 && written <= maxBytes, "raw(maxBytes:) wrote past its bound")
        commit(written)
        needsComma = false
    }

    /// After raw text that completed a value: the next value at this level needs a comma.
    @inlinable
    public mutating func endedValue() { needsComma = true }

    @inlinable
    public mutating func byte(_ b: UInt8) {
        put(b)
        needsComma = false
    }

    @inlinable @inline(__always)
    mutating func separate() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    @inlinable @inline(__always)
    mutating func putStatic(_ text: StaticString) {
        text.withUTF8Buffer { put($0) }
    }

    mutating func putText(_ text: String) {
        var copy = text
        copy.withUTF8 { put($0) }
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

    /// Members that continue an object someone else opened and already wrote into
    /// (`,"a":1,"b":2`): for layouts that splice a member list into a prebuilt object.
    @inlinable
    public static func continuingMembers(capacity: Int = 128, _ body: (inout JSONWriter) throws -> Void) rethrows -> [UInt8] {
        var w = JSONWriter(capacity: capacity)
        w.needsComma = true
        try body(&w)
        return w.bytes
    }

    /// Splices in members made by `continuingMembers` (they start with their own comma)
    /// after at least one member of the object being written.
    public mutating func splice(members: [UInt8]) {
        guard !members.isEmpty else { return }
        assert(needsComma, "continuing members go after a member")
        members.withUnsafeBufferPointer { put($0) }
    }

    /// Hands out what is written so far and empties the buffer, keeping the writer's
    /// place (inside which object, whether a comma is due): for layouts that cut the
    /// output into constant pieces around holes filled in later.
    public mutating func takeBytes() -> [UInt8] {
        let taken = bytes
        used = 0
        return taken
    }

    /// One value written by `body`, as bytes.
    @inlinable
    public static func bytes(capacity: Int = 256, _ body: (inout JSONWriter) throws -> Void) rethrows -> [UInt8] {
        var w = JSONWriter(capacity: capacity)
        try body(&w)
        return w.bytes
    }

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

    /// Like `appendEscaped(_:to:)`, over valid UTF-8.
    @inlinable
    public static func appendEscaped(utf8 input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(6 * input.count, 1)) { scratch in
            let written = escape(input, into: scratch.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<written]))
        }
    }

    /// The escaper itself: writes `input` (valid UTF-8) escaped into `out`, which has room
    /// for 6 bytes per input byte (the most any byte can become); returns the bytes
    /// written. Plain printable ASCII (no `"`, no `\`) is copied eight bytes at a time.
    @inlinable
    public static func escape(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard let base = input.baseAddress else { return 0 }
        let count = input.count
        var i = 0
        var o = 0
        while i < count {
            while i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                guard isPlainWord(word) else { break }
                UnsafeMutableRawPointer(out + o).storeBytes(of: word, as: UInt64.self)
                i += 8
                o += 8
            }
            while i < count, isPlain(base[i]) {
                out[o] = base[i]
                i += 1
                o += 1
            }
            if i < count { (i, o) = escapeOne(base, at: i, count: count, into: out, at: o) }
        }
        return o
    }

    /// `escape` for text known to hold no control and no character `TextSafety.isUnsafe`
    /// names (a checked link's decoded values: the canonicaliser refuses those). Then only
    /// `"` and `\` need escaping, so every other byte, UTF-8 included, is copied eight at a
    /// time; the output is `escape`'s. `out` needs room for 2 bytes per input byte.
    @inlinable
    public static func escapeSafeText(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard let base = input.baseAddress else { return 0 }
        let count = input.count
        var i = 0
        var o = 0
        while true {
            while i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if hasQuoteOrBackslash(word) { break }
                UnsafeMutableRawPointer(out + o).storeBytes(of: word, as: UInt64.self)
                i += 8
                o += 8
            }
            // Fewer than 8 bytes left, or a `"` or `\` among the next 8.
            let stop = min(i + 8, count)
            while i < stop {
                let b = base[i]
                if b == 0x22 || b == 0x5C { out[o] = 0x5C; o += 1 }
                out[o] = b
                i += 1
                o += 1
            }
            if i == count { break }
        }
        assert(o == escapedForCheck(input), "escapeSafeText got text that needs more than quote escapes")
        return o
    }

    /// True when one of the 8 bytes is `"` or `\` (exact for any bytes: the zero-byte test
    /// only errs above a true zero byte).
    @inlinable @inline(__always)
    static func hasQuoteOrBackslash(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & high != 0 }
        return hasZeroByte(w ^ (ones &* 0x22)) || hasZeroByte(w ^ (ones &* 0x5C))
    }

    /// How long `escape`'s output is (debug builds check `escapeSafeText` against it).
    @usableFromInline
    static func escapedForCheck(_ input: UnsafeBufferPointer<UInt8>) -> Int {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(6 * input.count, 1)) { escape(input, into: $0.baseAddress!) }
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
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & high != 0 }
        return !((w &- ones &* 0x20) & high != 0   // a byte < 0x20 (bytes are < 0x80 here)
                 || hasZeroByte(w ^ (ones &* 0x22)) || hasZeroByte(w ^ (ones &* 0x5C))
                 || (w &+ ones) & high != 0)           // a byte of 0x7F
    }

    /// Escapes the one character at `i` (not plain ASCII) into `out` at `o`; returns the
    /// indices after it.
    @usableFromInline
    static func escapeOne(_ base: UnsafePointer<UInt8>, at i: Int, count: Int,
                          into out: UnsafeMutablePointer<UInt8>, at o: Int) -> (Int, Int) {
        let b = base[i]
        func pair(_ c: UInt8) -> (Int, Int) {
            out[o] = 0x5C
            out[o + 1] = c
            return (i + 1, o + 2)
        }
        switch b {
        case 0x22: return pair(0x22)
        case 0x5C: return pair(0x5C)
        case 0x0A: return pair(UInt8(ascii: "n"))
        case 0x0D: return pair(UInt8(ascii: "r"))
        case 0x09: return pair(UInt8(ascii: "t"))
        case ..<0x80:  // the other controls and DEL
            return (i + 1, o + writeUnicodeEscape(Unicode.Scalar(b), into: out + o))
        default: break
        }
        // A multi-byte scalar (the input is valid UTF-8; a truncated tail is copied as is).
        let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
        guard i + length <= count else {
            (out + o).update(from: base + i, count: count - i)
            return (count, o + count - i)
        }
        var value = UInt32(b) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { value = value << 6 | (UInt32(base[i + k]) & 0x3F) }
        if let scalar = Unicode.Scalar(value), TextSafety.isUnsafe(scalar) {
            return (i + length, o + writeUnicodeEscape(scalar, into: out + o))
        }
        (out + o).update(from: base + i, count: length)
        return (i + length, o + length)
    }

    /// Writes the digits (at most 20 bytes) into `out`; returns how many.
    @inlinable
    static func writeDecimal(_ value: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        if value >= 0 && value < 10 { out[0] = UInt8(ascii: "0") &+ UInt8(value); return 1 }
        var magnitude = value.magnitude
        var n = 0
        if value < 0 { out[0] = UInt8(ascii: "-"); n = 1 }
        let first = n
        while magnitude > 0 {
            out[n] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
            magnitude /= 10
            n += 1
        }
        // The digits came out least significant first.
        var a = first, b = n - 1
        while a < b {
            let t = out[a]
            out[a] = out[b]
            out[b] = t
            a += 1
            b -= 1
        }
        return n
    }

    /// `\uXXXX` (a surrogate pair above U+FFFF) into `out`; returns 6 or 12.
    static func writeUnicodeEscape(_ scalar: Unicode.Scalar, into out: UnsafeMutablePointer<UInt8>) -> Int {
        func unit(_ u: UInt32, _ at: Int) {
            out[at] = 0x5C
            out[at + 1] = UInt8(ascii: "u")
            out[at + 2] = Hex.digit(UInt8((u >> 12) & 0xF))
            out[at + 3] = Hex.digit(UInt8((u >> 8) & 0xF))
            out[at + 4] = Hex.digit(UInt8((u >> 4) & 0xF))
            out[at + 5] = Hex.digit(UInt8(u & 0xF))
        }
        let v = scalar.value
        if v > 0xFFFF {
            let x = v - 0x10000
            unit(0xD800 + (x >> 10), 0)
            unit(0xDC00 + (x & 0x3FF), 6)
            return 12
        }
        unit(v, 0)
        return 6
    }

}

/// The writer's storage: a heap block freed in deinit. Shared between copies of a writer
/// until one of them writes (it then copies), so it is only ever mutated through a unique
/// reference: that is what makes it safe to send.
@usableFromInline
final class JSONByteBuffer: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline let capacity: Int

    @usableFromInline
    init(capacity: Int) {
        self.capacity = capacity
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { base.deallocate() }
}
