import APNsCore
internal import CCurl
internal import CCurlShims

/// One request on an easy handle of its own, blocking the calling thread until the answer:
/// the one libcurl path for what is not a push. Channel management (`CurlOneShot`) and
/// the feedback webhook both send through it, so both verify TLS 1.2+ the same way.
public struct BlockingRequest: Sendable {
    public enum HTTPVersion: Sendable, Equatable {
        /// HTTP/2: over TLS (ALPN) for `https://`, with prior knowledge for `http://`.
        case http2
        /// libcurl's choice: HTTP/1.1 for `http://`, HTTP/2 where TLS's ALPN offers it.
        case negotiated
    }

    public var httpVersion: HTTPVersion
    /// The whole exchange, connection included.
    public var timeoutMilliseconds: Int
    /// nil: bounded by `timeoutMilliseconds` only.
    public var connectTimeoutMilliseconds: Int?
    /// PEM CA bundle to verify the server with, instead of the system's.
    public var caFile: String?
    /// Whether `https_proxy` and friends in the environment apply.
    public var usesProxyEnvironment: Bool
    /// Whether the answer's headers and body are kept (else only its status).
    public var keepsAnswer: Bool

    public init(httpVersion: HTTPVersion, timeoutMilliseconds: Int, connectTimeoutMilliseconds: Int? = nil,
                caFile: String? = nil, usesProxyEnvironment: Bool = false, keepsAnswer: Bool = true) {
        self.httpVersion = httpVersion
        self.timeoutMilliseconds = timeoutMilliseconds
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.caFile = caFile
        self.usesProxyEnvironment = usesProxyEnvironment
        self.keepsAnswer = keepsAnswer
    }

    /// The answer (any status), or why none came: the failure's message is libcurl's.
    /// `request.headerLines` go out as given (`name:` with no value removes one of libcurl's).
    public func perform(_ request: OneShotRequest) -> Result<OneShotResponse, TransportFailure> {
        guard let easy = CurlEasyHandle() else { return .failure(TransportFailure(.transportError, "libcurl could not be initialised")) }
        let collector = AnswerCollector()
        let list = CurlHeaderList(request.headerLines)
        let e = easy.pointer
        _ = pg_curl_easy_setopt_string(e, CURLOPT_URL, request.url)
        switch httpVersion {
        case .http2:
            let version = request.url.hasPrefix("https://") ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            _ = pg_curl_easy_setopt_long(e, CURLOPT_HTTP_VERSION, Int(version))
        case .negotiated:
            break
        }
        _ = pg_curl_easy_setopt_long(e, CURLOPT_NOSIGNAL, 1)
        if !usesProxyEnvironment { _ = pg_curl_easy_setopt_string(e, CURLOPT_PROXY, "") }
        _ = pg_curl_easy_setopt_long(e, CURLOPT_FOLLOWLOCATION, 0)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        if let connectTimeoutMilliseconds { _ = pg_curl_easy_setopt_long(e, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds) }
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYPEER, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYHOST, 2)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        if let caFile { _ = pg_curl_easy_setopt_string(e, CURLOPT_CAINFO, caFile) }
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list.pointer))
        if keepsAnswer {
            let context = Unmanaged.passUnretained(collector).toOpaque()
            _ = pg_curl_easy_setopt_write_function(e, oneShotWriteBody)
            _ = pg_curl_easy_setopt_pointer(e, CURLOPT_WRITEDATA, context)
            _ = pg_curl_easy_setopt_header_function(e, oneShotReadHeader)
            _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HEADERDATA, context)
        } else {
            _ = pg_curl_easy_setopt_write_function(e) { _, size, count, _ in size * count }
        }
        let code: CURLcode = request.body.withUnsafeBytes { raw in
            switch request.method {
            case "GET":
                _ = pg_curl_easy_setopt_long(e, CURLOPT_HTTPGET, 1)
            case "POST":
                _ = pg_curl_easy_setopt_long(e, CURLOPT_POST, 1)
                _ = pg_curl_easy_setopt_off_t(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(raw.count))
                if let base = raw.baseAddress, raw.count > 0 {
                    _ = pg_curl_easy_setopt_pointer(e, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                } else {
                    _ = pg_curl_easy_setopt_string(e, CURLOPT_POSTFIELDS, "")
                }
            default:
                _ = pg_curl_easy_setopt_string(e, CURLOPT_CUSTOMREQUEST, request.method)
            }
            return curl_easy_perform(e)
        }
        withExtendedLifetime((collector, list)) {}
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            switch code {
            case CURLE_OPERATION_TIMEDOUT: return .failure(TransportFailure(.timeout, message))
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: return .failure(TransportFailure(.unreachable, message))
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
                return .failure(TransportFailure(.tlsFailed, message))
            case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
                return .failure(TransportFailure(.connectionLost, message))
            default: return .failure(TransportFailure(.transportError, message))
            }
        }
        var status = 0
        _ = pg_curl_easy_getinfo_long(e, CURLINFO_RESPONSE_CODE, &status)
        return .success(OneShotResponse(status: status, headers: collector.headers, body: collector.body))
    }
}

/// Filled by libcurl's callbacks on the request's own thread.
private final class AnswerCollector {
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    /// Management answers are small JSON; a list of 10,000 channel ids is about 300 KB.
    static let maximumBody = 4 * 1024 * 1024
}

private let oneShotWriteBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let collector = Unmanaged<AnswerCollector>.fromOpaque(context).takeUnretainedValue()
    let room = AnswerCollector.maximumBody - collector.body.count
    if room > 0 {
        data.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            collector.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: min(room, length)))
        }
    }
    return length
}

private let oneShotReadHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let collector = Unmanaged<AnswerCollector>.fromOpaque(context).takeUnretainedValue()
    data.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        let line = UnsafeBufferPointer(start: bytes, count: length)
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        var value = line[(colon + 1)...]
        while let b = value.first, b == 0x20 || b == 0x09 { value = value.dropFirst() }
        while let b = value.last, b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { value = value.dropLast() }
        collector.headers[name] = String(decoding: value, as: UTF8.self)
    }
    return length
}
