import StrictJSON

/// The strict reading of a request head (RFC 9112 §2–§7), done on the raw bytes before
/// libmicrohttpd parses them, because libmicrohttpd 0.9.75 accepts bare LF, folds
/// continuation lines into the header name, cuts lines at NUL and frames a request that
/// has both Content-Length and Transfer-Encoding by the chunked coding.
public struct RequestHeadCheck: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// The head has not ended yet and nothing wrong has been seen so far.
        case incomplete
        /// A valid head of this many bytes (through the empty line).
        case complete(headLength: Int)
        case rejected(FramingViolation)
    }

    public var maxHeadBytes: Int
    public var maxHeaderLines: Int
    public var maxQueryParameters: Int

    public init(maxHeadBytes: Int = 16 * 1024, maxHeaderLines: Int = 100, maxQueryParameters: Int = 256) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderLines = maxHeaderLines
        self.maxQueryParameters = maxQueryParameters
    }

    /// Checks the bytes received so far. A problem is reported as soon as the line
    /// holding it is complete, so a client cannot hold a connection with a bad head.
    public func check(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var start = 0
        var lineNumber = 0
        var headers: [(name: String, value: String)] = []
        var version = ""
        var target: Substring = ""
        while true {
            guard let end = lineEnd(bytes, from: start) else {
                if bytes.count >= maxHeadBytes || bytes.count - start > maxHeadBytes {
                    return .rejected(lineNumber == 0
                        ? FramingViolation(.requestLineTooLong, "the request line is over \(maxHeadBytes) bytes")
                        : FramingViolation(.headersTooLarge, "the request head is over \(maxHeadBytes) bytes"))
                }
                return .incomplete
            }
            switch end {
            case .bareLF:
                return .rejected(FramingViolation(.bareLineFeed, "\(lineName(lineNumber)) ends with a bare LF; lines end with CRLF"))
            case .bareCR:
                return .rejected(FramingViolation(.controlCharacter, "\(lineName(lineNumber)) has a CR not followed by LF"))
            case .crlf(let at):
                if at + 2 > maxHeadBytes {
                    return .rejected(lineNumber == 0
                        ? FramingViolation(.requestLineTooLong, "the request line is over \(maxHeadBytes) bytes")
                        : FramingViolation(.headersTooLarge, "the request head is over \(maxHeadBytes) bytes"))
                }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<at])
                if lineNumber == 0 {
                    switch requestLine(line) {
                    case .failure(let violation): return .rejected(violation)
                    case .success(let parts): (target, version) = parts
                    }
                } else if line.isEmpty {
                    if let violation = RequestHeadCheck.framingRules(headers: headers, version: version)
                        ?? queryRule(target) {
                        return .rejected(violation)
                    }
                    return .complete(headLength: at + 2)
                } else {
                    if lineNumber > maxHeaderLines {
                        return .rejected(FramingViolation(.headersTooLarge, "more than \(maxHeaderLines) header lines"))
                    }
                    switch headerLine(line, number: lineNumber) {
                    case .failure(let violation): return .rejected(violation)
                    case .success(let header): headers.append(header)
                    }
                }
                lineNumber += 1
                start = at + 2
            }
        }
    }

    public func check(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBytes { check($0) }
    }

    private enum LineEnd { case crlf(at: Int), bareLF, bareCR }

    private func lineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> LineEnd? {
        var i = start
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A { return .bareLF }
            if b == 0x0D {
                guard i + 1 < bytes.count else { return nil }
                return bytes[i + 1] == 0x0A ? .crlf(at: i) : .bareCR
            }
            i += 1
        }
        return nil
    }

    private func lineName(_ number: Int) -> String {
        number == 0 ? "the request line" : "header line \(number)"
    }

    /// `method SP request-target SP HTTP-version`, exactly one space each, nothing else.
    private func requestLine(_ line: UnsafeRawBufferPointer) -> Result<(Substring, String), FramingViolation> {
        if line.isEmpty {
            return .failure(FramingViolation(.malformedRequestLine, "the request starts with an empty line"))
        }
        if let bad = line.firstIndex(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .failure(FramingViolation(.controlCharacter, "the request line has control byte 0x\(hex(line[bad])) at column \(bad + 1)"))
        }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            if parts.count == 2 && !parts[1].isEmpty {
                return .failure(FramingViolation(.malformedRequestLine, "the request line has no HTTP version (HTTP/0.9 is not served)"))
            }
            return .failure(FramingViolation(.malformedRequestLine, "the request line must be 'METHOD SP target SP HTTP/1.1' with single spaces"))
        }
        guard parts[0].allSatisfy(isTokenByte) else {
            return .failure(FramingViolation(.malformedRequestLine, "the method is not a token"))
        }
        let target = parts[1]
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(FramingViolation(.invalidRequestTarget, "the request target has a byte outside visible ASCII"))
        }
        guard target.first == UInt8(ascii: "/") || (target.count == 1 && target.first == UInt8(ascii: "*")) else {
            return .failure(FramingViolation(.invalidRequestTarget, "the request target must be a path starting with '/'"))
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        if version != "HTTP/1.1" && version != "HTTP/1.0" {
            let looksLikeHTTP = parts[2].count == 8 && version.hasPrefix("HTTP/")
                && parts[2][parts[2].startIndex + 6] == UInt8(ascii: ".")
                && [5, 7].allSatisfy { isDigit(parts[2][parts[2].startIndex + $0]) }
            return .failure(looksLikeHTTP
                ? FramingViolation(.httpVersionNotSupported, "only HTTP/1.1 and HTTP/1.0 are served")
                : FramingViolation(.malformedRequestLine, "the request line does not end with an HTTP version"))
        }
        return .success((Substring(decoding: target, as: UTF8.self), version))
    }

    /// `field-name ":" OWS field-value OWS`; no space before the colon, no fold, no
    /// control byte but HTAB.
    private func headerLine(_ line: UnsafeRawBufferPointer, number: Int) -> Result<(name: String, value: String), FramingViolation> {
        if line[0] == 0x20 || line[0] == 0x09 {
            return .failure(FramingViolation(.obsoleteLineFolding, "header line \(number) starts with whitespace (obs-fold is not accepted)"))
        }
        if let bad = line.firstIndex(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return .failure(FramingViolation(.controlCharacter, "header line \(number) has control byte 0x\(hex(line[bad])) at column \(bad + 1)"))
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            return .failure(FramingViolation(.malformedHeader, "header line \(number) has no 'name:'"))
        }
        guard line[..<colon].allSatisfy(isTokenByte) else {
            return .failure(FramingViolation(.malformedHeader, "header line \(number): the name is not a token (no whitespace before ':')"))
        }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd && (line[valueStart] == 0x20 || line[valueStart] == 0x09) { valueStart += 1 }
        while valueEnd > valueStart && (line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09) { valueEnd -= 1 }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self).lowercased()
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd]), as: UTF8.self)
        return .success((name, value))
    }

    private func queryRule(_ target: Substring) -> FramingViolation? {
        guard let question = target.firstIndex(of: "?") else { return nil }
        let query = target[target.index(after: question)...]
        let count = query.isEmpty ? 0 : query.utf8.count(where: { $0 == UInt8(ascii: "&") }) + 1
        guard count > maxQueryParameters else { return nil }
        return FramingViolation(.tooManyQueryParameters, "\(count) query parameters; at most \(maxQueryParameters)")
    }

    /// The rules on the parsed fields that decide where a message ends and who it is
    /// for (RFC 9112 §3.2, §6.1–§6.3), applied to every request, also to those that
    /// libmicrohttpd parsed on a kept-alive connection. Names are lowercase.
    public static func framingRules(headers: [(name: String, value: String)], version: String) -> FramingViolation? {
        var lengths: [String] = []
        var encodings: [String] = []
        var hosts = 0
        var authorizations = 0
        var idempotencyKeys = 0
        for (name, value) in headers {
            switch name {
            case "content-length": lengths.append(value)
            case "transfer-encoding": encodings.append(value)
            case "host": hosts += 1
            case "authorization": authorizations += 1
            case "idempotency-key": idempotencyKeys += 1
            default: break
            }
        }
        if !lengths.isEmpty && !encodings.isEmpty {
            return FramingViolation(.ambiguousFraming, "both Content-Length and Transfer-Encoding are present")
        }
        if lengths.count > 1 {
            return FramingViolation(.duplicateContentLength, "Content-Length appears \(lengths.count) times")
        }
        if let length = lengths.first, contentLength(length) == nil {
            return FramingViolation(.invalidContentLength, "Content-Length must be 1 to 18 decimal digits")
        }
        if encodings.count > 1 || encodings.first.map({ $0.lowercased() != "chunked" }) == true {
            return FramingViolation(.unsupportedTransferEncoding, "the only Transfer-Encoding accepted is exactly 'chunked'")
        }
        if hosts > 1 {
            return FramingViolation(.duplicateHost, "Host appears \(hosts) times")
        }
        if hosts == 0 && version == "HTTP/1.1" {
            return FramingViolation(.missingHost, "an HTTP/1.1 request must have a Host header")
        }
        if authorizations > 1 {
            return FramingViolation(.duplicateAuthorization, "Authorization appears \(authorizations) times")
        }
        // Which one would a retry be matched by? Neither is guessed.
        if idempotencyKeys > 1 {
            return FramingViolation(.duplicateIdempotencyKey, "Idempotency-Key appears \(idempotencyKeys) times")
        }
        return nil
    }

    /// Plain decimal digits, at most 18 of them (so the value always fits an Int).
    public static func contentLength(_ text: String) -> Int? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 18, utf8.allSatisfy(isDigit) else { return nil }
        return Int(text)
    }
}

/// RFC 9110 §5.6.2 tchar.
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

private func hex(_ b: UInt8) -> String { Hex.encode([b], uppercase: true) }
