import HTTPServer
import StrictJSON

extension DiagnosticCode {
    /// The top-level code (403) of a request refused because it may come from a web page
    /// rather than from this machine's own programs; `errors[0]` says which header.
    public static let foreignRequest = DiagnosticCode(rawValue: "foreignRequest")
    /// With no API keys: a `Host` that is not a loopback name or address with the
    /// listening port (DNS rebinding).
    public static let foreignHost = DiagnosticCode(rawValue: "foreignHost")
    /// With no API keys: an `Origin` that is not a loopback origin (a page elsewhere).
    public static let foreignOrigin = DiagnosticCode(rawValue: "foreignOrigin")
    /// With no API keys: a request a proxy passed on (`Forwarded`, `X-Forwarded-For`,
    /// `Via`). A proxy on this machine carries other machines' requests, and with the
    /// loopback `Host` it may send, the `Host` check alone would let them in.
    public static let proxiedRequest = DiagnosticCode(rawValue: "proxiedRequest")
}

/// With no API keys the gateway trusts whoever reaches it, and the loopback listener
/// limits that to this machine's programs — but a browser on this machine runs other
/// people's pages. A page whose name is rebound to 127.0.0.1 (DNS rebinding) is
/// same-origin with the gateway and could use the whole API; any page can send it
/// simple cross-origin requests. So in that mode only loopback names are served
/// (`Host`), and a request a page of another origin made (`Origin`) is refused. Programs
/// (curl, the CLI, a backend) send a loopback `Host` and no `Origin`; the `/ui` page's
/// requests are same-origin.
enum LoopbackOnly {
    /// nil when the request may be served in keyless mode. `anyHost`: the endpoint is a
    /// public document chosen by the `Host` (the AASA); only `Origin` is checked.
    static func problem(_ request: HTTPRequest, anyHost: Bool = false) -> Problem? {
        // The server refuses a second Host before this (duplicateHost); HTTP/1.0 may have none.
        if !anyHost, let host = request.header("host"), !isLoopbackAuthority(host, port: request.localPort) {
            return refusal(.foreignHost, header: "Host",
                           "Host \(JSONWriter.quoted(TextSafety.excerpt(host, limit: 64))) is not a loopback name: with no API keys configured only localhost, 127.0.0.0/8 and [::1]\(request.localPort > 0 ? " (port \(request.localPort) or none)" : "") are served")
        }
        if !anyHost, let header = ["forwarded", "x-forwarded-for", "via"].first(where: { request.header($0) != nil }) {
            let name = header == "via" ? "Via" : header == "forwarded" ? "Forwarded" : "X-Forwarded-For"
            return refusal(.proxiedRequest, header: name,
                           "a request passed on by a proxy (\(name)) may come from anywhere: with no API keys configured only this machine's own programs are served; configure server.apiKeys to serve behind a proxy")
        }
        let origins = request.headers.filter { $0.name == "origin" }
        if origins.count > 1 {
            return refusal(.foreignOrigin, header: "Origin", "Origin appears \(origins.count) times")
        }
        if let origin = origins.first?.value, !isLoopbackOrigin(origin) {
            return refusal(.foreignOrigin, header: "Origin",
                           "a page at \(JSONWriter.quoted(TextSafety.excerpt(origin, limit: 64))) may not use a gateway that has no API keys; only loopback origins (http://localhost, http://127.0.0.1, http://[::1], any port) are served")
        }
        return nil
    }

    private static func refusal(_ code: DiagnosticCode, header: String, _ message: String) -> Problem {
        let diagnostic = Diagnostic(code, at: .header(header), message)
        return Problem(status: 403, code: .foreignRequest, title: "Forbidden", detail: diagnostic.description, errors: [diagnostic])
    }

    /// `host` or `host:port` (RFC 9110 §7.2) naming this machine: `localhost`, an IPv4
    /// address in 127.0.0.0/8 written as four decimal numbers, or `[::1]`. The port, when
    /// given, is `port` (any port when `port` is nil or 0).
    static func isLoopbackAuthority(_ text: String, port: Int?) -> Bool {
        let (host, portText): (Substring, Substring?)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { portText = nil } else {
                guard rest.first == ":" else { return false }
                portText = rest.dropFirst()
            }
            guard isIPv6Loopback(String(host)) else { return false }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return false }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard host.lowercased() == "localhost" || isIPv4Loopback(host) else { return false }
        }
        guard let portText else { return true }
        guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy(isDigit), let given = Int(portText),
              (1...65535).contains(given) else { return false }
        if let port, port > 0 { return given == port }
        return true
    }

    /// `http://` or `https://` and a loopback authority, any port, nothing after it
    /// (RFC 6454 §6.2). `null` (a sandboxed frame, a file) is not one.
    static func isLoopbackOrigin(_ text: String) -> Bool {
        let lower = text.lowercased()
        for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
            return isLoopbackAuthority(String(text.dropFirst(scheme.count)), port: nil)
        }
        return false
    }

    /// Four decimal numbers 0–255 without leading zeros (`inet_pton`'s form), the first 127.
    static func isIPv4Loopback(_ text: Substring) -> Bool {
        guard let address = IPAddress(text), address.isIPv4 else { return false }
        return address.bytes[12] == 127
    }

    /// `::1` in any spelling; not an IPv4-mapped address (`::ffff:127.0.0.1`).
    static func isIPv6Loopback(_ text: String) -> Bool {
        IPAddress(text).map { $0 == ipv6Loopback } ?? false
    }

    private static let ipv6Loopback = IPAddress("::1")

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
}
