/// The `/ui` page: a static HTML document, its stylesheet and its script, embedded in the
/// binary at build time (`Assets/`, by the EmbedPageAssets plugin). The page talks only to
/// the server it came from (`/v1/…`), inserts every value as text, and is served with a
/// Content-Security-Policy that forbids inline script, `eval`, string-to-HTML sinks
/// (Trusted Types) and every other origin.
public enum PreviewPage {
    public struct Asset: Sendable {
        /// Where the gateway serves it.
        public let path: String
        public let contentType: String
        public let body: [UInt8]
    }

    /// The file names in `Assets/` and where each is served.
    static let served: [(file: String, path: String, contentType: String)] = [
        ("index.html", "/ui", "text/html; charset=utf-8"),
        ("page.css", "/ui/page.css", "text/css; charset=utf-8"),
        ("page.js", "/ui/page.js", "text/javascript; charset=utf-8"),
    ]

    public static let assets: [Asset] = served.map { entry in
        let text = EmbeddedPageAssets.files.first { $0.path.hasSuffix("/" + entry.file) }?.text ?? ""
        return Asset(path: entry.path, contentType: entry.contentType, body: Array(text.utf8))
    }

    /// Nothing but this server's own script, style and API; no framing; no inline script,
    /// `eval` or HTML built from strings (`require-trusted-types-for`).
    public static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
        + "require-trusted-types-for 'script'; trusted-types 'none'"

    /// Sent with every asset.
    public static let headers: [(name: String, value: String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
}
