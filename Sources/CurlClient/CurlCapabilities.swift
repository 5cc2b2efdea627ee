internal import CCurl

/// What the linked libcurl can do, checked once at start-up.
public enum CurlCapabilities {
    /// libcurl's version as 0xMMmmpp.
    public static let versionNumber: UInt32 = {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return 0 }
        return UInt32(info.pointee.version_num)
    }()

    /// libcurl and what it was built with, as the loaded library reports itself:
    /// `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 nghttp2/1.52.0 …`.
    public static var versionDescription: String { String(cString: curl_version()) }

    public static var versionString: String {
        "\(versionNumber >> 16).\(versionNumber >> 8 & 0xFF).\(versionNumber & 0xFF)"
    }

    /// libcurl 7.88.x breaks HTTP/2 cleartext (prior knowledge) as soon as a connection is
    /// reused: every request after the first fails with "Error in the HTTP2 framing layer"
    /// (curl issue #10634, fixed in 8.0.0). TLS connections (ALPN) are not affected.
    public static var reusesCleartextHTTP2: Bool { versionNumber >= 0x08_00_00 || versionNumber < 0x07_58_00 }
}
