import Crypto
import CurlClient

/// The versions of the C libraries the transport and the signing key link, as they report
/// themselves at run time (the shared objects actually loaded, not the headers built against).
public enum LibraryVersions {
    /// libcurl and what it was built with: `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 nghttp2/1.52.0 …`.
    public static var curl: String { CurlCapabilities.versionDescription }

    /// `OpenSSL 3.0.15 3 Sep 2024`.
    public static var openSSL: String { OpenSSLLibrary.version }
}
