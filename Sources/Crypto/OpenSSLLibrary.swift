internal import COpenSSL

/// The OpenSSL this process loaded, as it reports itself at run time.
public enum OpenSSLLibrary {
    /// `OpenSSL 3.0.15 3 Sep 2024`.
    public static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
