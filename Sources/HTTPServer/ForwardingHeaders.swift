/// One hop of a forwarding header: what a proxy said about where it got the request.
public enum ForwardedNode: Sendable, Equatable, CustomStringConvertible {
    case address(IPAddress)
    /// RFC 7239 `unknown`: the proxy did not know (or would not say).
    case unknown
    /// RFC 7239 obfuscated identifier (`_hidden`), as written.
    case obfuscated(String)

    public var description: String {
        switch self {
        case .address(let address): address.description
        case .unknown: "unknown"
        case .obfuscated(let name): name
        }
    }
}

/// Why forwarding headers from a trusted proxy were refused. Never a guess: a header that
/// cannot be read exactly is answered 400, not half-used.
public struct ForwardingProblem: Error, Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        /// The header breaks its syntax (RFC 7239 for `Forwarded`; a comma-separated list
        /// of addresses for `X-Forwarded-For`).
        case invalidForwarding
        /// Over 2048 bytes or 32 hops.
        case forwardingTooLarge
        /// Both headers, naming different hops.
        case conflictingForwarding
    }

    public var code: Code
    /// `Forwarded` or `X-Forwarded-For`.
    public var header: String
    /// Where and what was expected; quotes at most a short, escaped piece of the header.
    public var detail: String

    public init(_ code: Code, header: String, _ detail: String) {
        self.code = code
        self.header = header
        self.detail = detail
    }
}

/// Parsers for `Forwarded` (RFC 7239) and `X-Forwarded-For`. Several lines of one header
/// are one list, in order (RFC 9110 §5.3). The hops come back left (farthest from this
/// server) to right (the proxy that connected).
public enum ForwardingHeaders {
    /// All lines of one header together.
    public static let maxBytes = 2048
    public static let maxHops = 32

    // MARK: Forwarded (RFC 7239)

    public static func forwarded(_ lines: [String]) -> Result<[ForwardedNode], ForwardingProblem> {
        let header = "Forwarded"
        let text = Array(lines.joined(separator: ",").utf8)
        if text.count > maxBytes {
            return .failure(ForwardingProblem(.forwardingTooLarge, header: header, "\(text.count) bytes; at most \(maxBytes) are read"))
        }
        var parser = Cursor(bytes: text)
        var hops: [ForwardedNode] = []
        var element = 0
        func fail(_ message: String) -> Result<[ForwardedNode], ForwardingProblem> {
            .failure(ForwardingProblem(.invalidForwarding, header: header, "element \(element + 1): \(message)"))
        }
        while true {
            parser.skipWhitespace()
            if parser.atEnd { break }
            if parser.peek == UInt8(ascii: ",") {  // an empty list element (RFC 9110 §5.6.1)
                parser.index += 1
                continue
            }
            var seen: Set<String> = []
            var hop: ForwardedNode?
            // forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
            while true {
                parser.skipWhitespace()
                if parser.atEnd || parser.peek == UInt8(ascii: ",") { break }
                if parser.peek == UInt8(ascii: ";") {
                    parser.index += 1
                    continue
                }
                let name = parser.token().lowercased()
                guard !name.isEmpty else { return fail("expected a parameter name (for, by, host, proto) \(parser.here)") }
                guard parser.peek == UInt8(ascii: "=") else { return fail("expected \"=\" after \"\(name)\" \(parser.here)") }
                parser.index += 1
                let value: String
                if parser.peek == UInt8(ascii: "\"") {
                    guard let quoted = parser.quotedString() else { return fail("a quoted value is not closed") }
                    value = quoted
                } else {
                    value = parser.token()
                    if let next = parser.peek, next == UInt8(ascii: ":") || next == UInt8(ascii: "[") || next == UInt8(ascii: "]") {
                        return fail("a value with \":\" or brackets must be quoted (for=\"[2001:db8::1]:4711\", for=\"192.0.2.43:4711\") \(parser.here)")
                    }
                    guard !value.isEmpty else {
                        return fail("the value of \"\(name)\" is empty or needs quotes (an IPv6 address or a port: for=\"[2001:db8::1]:4711\") \(parser.here)")
                    }
                }
                guard seen.insert(name).inserted else { return fail("\"\(name)\" appears twice") }
                if name == "for" {
                    switch node(value, header: header) {
                    case .success(let parsed): hop = parsed
                    case .failure(let problem): return fail(problem.message)
                    }
                }
                parser.skipWhitespace()
                guard parser.atEnd || parser.peek == UInt8(ascii: ";") || parser.peek == UInt8(ascii: ",") else {
                    return fail("expected \";\" or \",\" after the value of \"\(name)\" \(parser.here)")
                }
            }
            // An element without `for=` is a hop that did not say who it served.
            hops.append(hop ?? .unknown)
            element += 1
            if hops.count > maxHops {
                return .failure(ForwardingProblem(.forwardingTooLarge, header: header, "more than \(maxHops) hops"))
            }
        }
        if hops.isEmpty { return fail("the header is empty") }
        return .success(hops)
    }

    /// RFC 7239 `node`: `192.0.2.1`, `"192.0.2.1:4711"`, `"[2001:db8::1]"`,
    /// `"[2001:db8::1]:4711"`, `unknown`, `_obfuscated`, each with an optional port (a
    /// number or an obfuscated one); the port is dropped.
    static func node(_ text: String, header: String) -> Result<ForwardedNode, NodeError> {
        var name = Substring(text)
        var port: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return .failure(NodeError("\"[\" without \"]\" in \(quote(text))")) }
            let inside = name[name.index(after: name.startIndex)..<close]
            let rest = name[name.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return .failure(NodeError("expected \":PORT\" after \"]\" in \(quote(text))")) }
                port = rest.dropFirst()
            }
            guard inside.contains(":"), let address = IPAddress(inside) else {
                return .failure(NodeError("\(quote(String(inside))) in brackets is not an IPv6 address"))
            }
            if let port, !validPort(port) { return .failure(NodeError("\(quote(String(port))) is not a port (1 to 5 digits, or _obfuscated)")) }
            return .success(.address(address))
        }
        if let colon = name.firstIndex(of: ":") {
            if name[name.index(after: colon)...].contains(":") {
                return .failure(NodeError("\(quote(text)) looks like an IPv6 address, which is written in brackets (\"[2001:db8::1]:4711\")"))
            }
            port = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        if let port, !validPort(port) { return .failure(NodeError("\(quote(String(port))) is not a port (1 to 5 digits, or _obfuscated)")) }
        if name.lowercased() == "unknown" { return .success(.unknown) }
        if name.hasPrefix("_") {
            guard name.count > 1, name.utf8.allSatisfy(isObfuscatedByte) else {
                return .failure(NodeError("\(quote(String(name))) is not an obfuscated identifier (\"_\" then letters, digits, \".\", \"_\", \"-\")"))
            }
            return .success(.obfuscated(String(name)))
        }
        guard !name.contains(":"), let address = IPAddress(name), address.isIPv4 else {
            return .failure(NodeError("\(quote(String(name))) is not an IPv4 address, [IPv6], unknown or an _obfuscated identifier"))
        }
        return .success(.address(address))
    }

    struct NodeError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static func validPort(_ port: Substring) -> Bool {
        if port.hasPrefix("_") { return port.count > 1 && port.utf8.allSatisfy(isObfuscatedByte) }
        return (1...5).contains(port.count) && port.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    static func isObfuscatedByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }

    // MARK: X-Forwarded-For

    /// A comma-separated list of addresses, each IPv4, IPv6, `IPv4:port`, `[IPv6]`,
    /// `[IPv6]:port` or `unknown`. An empty element is refused: it is a hop that said
    /// nothing, which no proxy writes.
    public static func xForwardedFor(_ lines: [String]) -> Result<[ForwardedNode], ForwardingProblem> {
        let header = "X-Forwarded-For"
        let text = lines.joined(separator: ",")
        if text.utf8.count > maxBytes {
            return .failure(ForwardingProblem(.forwardingTooLarge, header: header, "\(text.utf8.count) bytes; at most \(maxBytes) are read"))
        }
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        if items.count > maxHops {
            return .failure(ForwardingProblem(.forwardingTooLarge, header: header, "\(items.count) hops; at most \(maxHops)"))
        }
        var hops: [ForwardedNode] = []
        for (i, raw) in items.enumerated() {
            let item = raw.trimmingWhitespace()
            func fail(_ message: String) -> Result<[ForwardedNode], ForwardingProblem> {
                .failure(ForwardingProblem(.invalidForwarding, header: header, "element \(i + 1): \(message)"))
            }
            if item.isEmpty { return fail("empty; expected an IP address") }
            if item.lowercased() == "unknown" {
                hops.append(.unknown)
                continue
            }
            if let address = IPAddress(item) {  // a bare IPv4 or IPv6 address
                hops.append(.address(address))
                continue
            }
            // With a port, or in brackets: the Forwarded node rules, without obfuscation.
            guard !item.hasPrefix("_"), case .success(let node) = node(String(item), header: header) else {
                return fail("\(quote(String(item))) is not an IP address (IPv4, IPv6, IPv4:port, [IPv6]:port) or unknown")
            }
            hops.append(node)
        }
        return .success(hops)
    }

    /// A piece of a header for a message: escaped and cut (the header is the client's).
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars.prefix(64) {
            if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "\\" {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        if text.unicodeScalars.count > 64 { out += "…" }
        return out + "\""
    }

    /// A byte cursor over a header value.
    struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }
        var here: String { atEnd ? "at the end" : "at byte \(index + 1)" }

        mutating func skipWhitespace() {
            while let b = peek, b == 0x20 || b == 0x09 { index += 1 }
        }

        /// RFC 9110 token characters.
        mutating func token() -> String {
            let start = index
            while let b = peek, Self.isTokenByte(b) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static func isTokenByte(_ b: UInt8) -> Bool {
            if (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) { return true }
            return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
        }

        /// A quoted-string at the cursor (which is on the opening quote), unescaped; nil
        /// when it is not closed or holds a control byte.
        mutating func quotedString() -> String? {
            index += 1
            var out: [UInt8] = []
            while let b = peek {
                index += 1
                if b == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
                if b == UInt8(ascii: "\\") {
                    guard let next = peek, next >= 0x20 || next == 0x09, next != 0x7F else { return nil }
                    out.append(next)
                    index += 1
                    continue
                }
                guard b >= 0x20 || b == 0x09, b != 0x7F else { return nil }
                out.append(b)
            }
            return nil
        }
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
