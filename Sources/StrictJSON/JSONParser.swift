/// Why a document was refused. Codes are stable: tests, the CLI and the HTTP API use them.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        case invalidJSON
        case invalidUTF8
        case duplicateKey
        case tooDeep
        case tooLarge
    }

    public var code: Code
    public var message: String
    /// 1-based line and column (column counts bytes) of the offending byte.
    public var line: Int
    public var column: Int
    /// Byte offset of the offending byte.
    public var offset: Int
    /// Where in the document the problem is (the member or element being read).
    public var path: JSONPath

    public var description: String {
        "line \(line), column \(column) (at \(path)): \(message)"
    }
}

/// A strict RFC 8259 parser: valid UTF-8 only, no duplicate keys, no trailing commas,
/// no comments, bounded nesting. It never repairs input.
public struct JSONParser: Sendable {
    public var maxDepth: Int
    public var maxBytes: Int

    public init(maxDepth: Int = 64, maxBytes: Int = 64 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    public func parse(_ text: String) throws(JSONParseError) -> JSON {
        var copy = text
        let result: Result<JSON, JSONParseError> = copy.withUTF8 { buffer in
            do throws(JSONParseError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONParseError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSON {
        var scanner = Scanner(bytes: buffer, maxDepth: maxDepth)
        if buffer.count > maxBytes {
            throw scanner.error(.tooLarge, "document is \(buffer.count) bytes; the limit is \(maxBytes)", at: 0)
        }
        // A UTF-8 byte order mark is not JSON (RFC 8259 §8.1: must not add one).
        scanner.skipWhitespace()
        if scanner.position == buffer.count {
            throw scanner.error(.invalidJSON, "empty document: expected a JSON value", at: scanner.position)
        }
        let value = try scanner.parseValue(depth: 1)
        scanner.skipWhitespace()
        if scanner.position != buffer.count {
            throw scanner.error(.invalidJSON, "unexpected \(scanner.describeByte(at: scanner.position)) after the end of the document", at: scanner.position)
        }
        return value
    }
}

private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var path: [JSONPath.Component] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ code: JSONParseError.Code, _ message: String, at offset: Int) -> JSONParseError {
        var line = 1
        var lineStart = 0
        var i = 0
        let end = min(offset, bytes.count)
        while i < end {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        return JSONParseError(code: code, message: message, line: line, column: offset - lineStart + 1,
                              offset: offset, path: JSONPath(path))
    }

    func describeByte(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of input" }
        let b = bytes[offset]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x" + String(b, radix: 16, uppercase: true)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        skipWhitespace()
        guard position < bytes.count else {
            throw error(.invalidJSON, "unexpected end of input: expected a value", at: position)
        }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default:
            throw error(.invalidJSON, "unexpected \(describeByte(at: position)): expected a value", at: position)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = position
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { lit -> Bool in
            guard start + count <= bytes.count else { return false }
            for i in 0..<count where bytes[start + i] != lit[i] { return false }
            return true
        }
        guard matches else {
            throw error(.invalidJSON, "invalid literal: expected \(literal)", at: start)
        }
        position += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maxDepth else {
            throw error(.tooDeep, "nesting deeper than \(maxDepth) levels", at: position)
        }
        position += 1  // {
        var members: [JSONMember] = []
        var seen = Set<String>()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(JSONObject(members))
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error(.invalidJSON, "unexpected \(describeByte(at: position)): expected a member name in double quotes", at: position)
            }
            let keyOffset = position
            let key = try parseString()
            if !seen.insert(key).inserted {
                path.append(.key(key))
                let e = error(.duplicateKey, "duplicate key \(JSONWriter.quoted(key))", at: keyOffset)
                throw e
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error(.invalidJSON, "unexpected \(describeByte(at: position)): expected ':' after the member name", at: position)
            }
            position += 1
            path.append(.key(key))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            members.append(JSONMember(key: key, value: value))
            skipWhitespace()
            guard position < bytes.count else {
                throw error(.invalidJSON, "unexpected end of input: expected ',' or '}'", at: position)
            }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(JSONObject(members))
            }
            throw error(.invalidJSON, "unexpected \(describeByte(at: position)): expected ',' or '}'", at: position)
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maxDepth else {
            throw error(.tooDeep, "nesting deeper than \(maxDepth) levels", at: position)
        }
        position += 1  // [
        var elements: [JSON] = []
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            path.append(.index(elements.count))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            elements.append(value)
            skipWhitespace()
            guard position < bytes.count else {
                throw error(.invalidJSON, "unexpected end of input: expected ',' or ']'", at: position)
            }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            throw error(.invalidJSON, "unexpected \(describeByte(at: position)): expected ',' or ']'", at: position)
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> String {
        let start = position
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else {
            throw error(.invalidJSON, "invalid number: expected a digit", at: position)
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count && isDigit(bytes[position]) {
                throw error(.invalidJSON, "invalid number: leading zero", at: start)
            }
        } else {
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error(.invalidJSON, "invalid number: expected a digit after '.'", at: position)
            }
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count && (bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E")) {
            position += 1
            if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error(.invalidJSON, "invalid number: expected a digit in the exponent", at: position)
            }
            while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    /// Reads a string starting at the opening quote. Validates UTF-8 and escapes;
    /// lone surrogates in `\u` escapes are refused (they cannot be UTF-8).
    mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        var out: [UInt8] = []
        var runStart = position
        while true {
            guard position < bytes.count else {
                throw error(.invalidJSON, "unterminated string", at: position)
            }
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                try parseEscape(into: &out)
                runStart = position
                continue
            }
            if b < 0x20 {
                throw error(.invalidJSON, "control character 0x\(String(b, radix: 16, uppercase: true)) in a string must be escaped", at: position)
            }
            if b < 0x80 {
                position += 1
                continue
            }
            try skipUTF8Sequence()
        }
    }

    mutating func parseEscape(into out: inout [UInt8]) throws(JSONParseError) {
        let start = position
        position += 1  // backslash
        guard position < bytes.count else {
            throw error(.invalidJSON, "unterminated escape", at: start)
        }
        let c = bytes[position]
        position += 1
        switch c {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            let first = try readHex4(escapeStart: start)
            var scalarValue = UInt32(first)
            if first >= 0xD800 && first <= 0xDBFF {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw error(.invalidUTF8, "lone high surrogate \\u\(hex4(first)) in a string", at: start)
                }
                let lowStart = position
                position += 2
                let second = try readHex4(escapeStart: lowStart)
                guard second >= 0xDC00 && second <= 0xDFFF else {
                    throw error(.invalidUTF8, "high surrogate \\u\(hex4(first)) not followed by a low surrogate", at: start)
                }
                scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            } else if first >= 0xDC00 && first <= 0xDFFF {
                throw error(.invalidUTF8, "lone low surrogate \\u\(hex4(first)) in a string", at: start)
            }
            let scalar = Unicode.Scalar(scalarValue)!
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            // A control or non-ASCII byte is named by its value, never echoed raw.
            let shown = c > 0x20 && c < 0x7F ? "'\\\(Character(Unicode.Scalar(c)))'" : "'\\' followed by byte 0x\(String(c, radix: 16, uppercase: true))"
            throw error(.invalidJSON, "invalid escape \(shown)", at: start)
        }
    }

    func hex4(_ v: UInt16) -> String {
        Hex.padded(UInt64(v), width: 4, uppercase: true)
    }

    mutating func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        guard position + 4 <= bytes.count else {
            throw error(.invalidJSON, "invalid \\u escape: expected four hex digits", at: escapeStart)
        }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let d: UInt8
            switch b {
            case 0x30...0x39: d = b - 0x30
            case 0x41...0x46: d = b - 0x41 + 10
            case 0x61...0x66: d = b - 0x61 + 10
            default:
                throw error(.invalidJSON, "invalid \\u escape: expected four hex digits", at: escapeStart)
            }
            v = v << 4 | UInt16(d)
            position += 1
        }
        return v
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates,
    /// nothing above U+10FFFF) and steps over it.
    mutating func skipUTF8Sequence() throws(JSONParseError) {
        let start = position
        let b0 = bytes[position]
        let length: Int
        var minSecond: UInt8 = 0x80
        var maxSecond: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; minSecond = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; maxSecond = 0x9F
        case 0xF0: length = 4; minSecond = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; maxSecond = 0x8F
        default:
            throw error(.invalidUTF8, "invalid UTF-8 byte 0x\(String(b0, radix: 16, uppercase: true))", at: start)
        }
        guard start + length <= bytes.count else {
            throw error(.invalidUTF8, "truncated UTF-8 sequence", at: start)
        }
        let b1 = bytes[start + 1]
        guard b1 >= minSecond && b1 <= maxSecond else {
            throw error(.invalidUTF8, "invalid UTF-8 sequence", at: start)
        }
        var i = 2
        while i < length {
            let b = bytes[start + i]
            guard b >= 0x80 && b <= 0xBF else {
                throw error(.invalidUTF8, "invalid UTF-8 sequence", at: start)
            }
            i += 1
        }
        position += length
    }
}
