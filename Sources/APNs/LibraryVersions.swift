import CCurl
import COpenSSL

/// The versions of the C libraries this module links, as they report themselves at run
/// time (the shared objects actually loaded, not the headers built against).
public enum LibraryVersions {
    /// libcurl and what it was built with: `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 nghttp2/1.52.0 …`.
    public static var curl: String { String(cString: curl_version()) }

    /// `OpenSSL 3.0.15 3 Sep 2024`.
    public static var openSSL: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
