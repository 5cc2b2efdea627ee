import CCurl
import CShims
import OSThreads

/// One HTTP/2 request and its answer, for the few requests that are not pushes (channel
/// management): any method, the answer's headers APNs uses, and its body.
public struct OneShotRequest: Sendable, Equatable {
    public var method: String
    /// The whole URL: base URL and path.
    public var url: String
    public var headerLines: [String]
    public var body: [UInt8]

    public init(method: String, url: String, headerLines: [String], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headerLines = headerLines
        self.body = body
    }
}

public struct OneShotResponse: Sendable, Equatable {
    public var status: Int
    /// The answer's headers by lower-case name (the last value of a repeated one).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends one request and waits for its answer; the libcurl one below, or a test's.
public protocol OneShotTransport: Sendable {
    func perform(_ request: OneShotRequest) async -> Result<OneShotResponse, TransportFailure>
}

/// A blocking libcurl easy handle per request, on a thread of its own: channel management
/// is a handful of requests, for which the multiplexed push transport would be overkill.
/// HTTP/2 over TLS 1.2+ (verified; `caFile` for a local server), or cleartext with prior
/// knowledge to a loopback `http://` URL, as the push transport does.
public struct CurlOneShot: OneShotTransport {
    public var caFile: String?
    public var timeoutMilliseconds: Int

    public init(caFile: String? = nil, timeoutMilliseconds: Int = 10_000) {
        self.caFile = caFile
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func perform(_ request: OneShotRequest) async -> Result<OneShotResponse, TransportFailure> {
        await withCheckedContinuation { continuation in
            let settings = self
            let started = DetachedThread.start(name: "pg-oneshot") { continuation.resume(returning: settings.performBlocking(request)) }
            if !started { continuation.resume(returning: .failure(TransportFailure(.transportError, "cannot start a thread for the request"))) }
        }
    }

    func performBlocking(_ request: OneShotRequest) -> Result<OneShotResponse, TransportFailure> {
        guard let easy = CurlEasyHandle() else { return .failure(TransportFailure(.transportError, "libcurl could not be initialised")) }
        let collector = AnswerCollector()
        let list = CurlHeaderList(request.headerLines + ["content-type:" + (request.body.isEmpty ? "" : " application/json"), "accept:", "expect:"])
        let e = easy.pointer
        let version = request.url.hasPrefix("https://") ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        _ = pg_curl_easy_setopt_string(e, CURLOPT_URL, request.url)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_HTTP_VERSION, Int(version))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_NOSIGNAL, 1)
        _ = pg_curl_easy_setopt_string(e, CURLOPT_PROXY, "")
        _ = pg_curl_easy_setopt_long(e, CURLOPT_FOLLOWLOCATION, 0)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMilliseconds, 5_000))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYPEER, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYHOST, 2)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        if let caFile { _ = pg_curl_easy_setopt_string(e, CURLOPT_CAINFO, caFile) }
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list.pointer))
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = pg_curl_easy_setopt_write_function(e, oneShotWriteBody)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_WRITEDATA, context)
        _ = pg_curl_easy_setopt_header_function(e, oneShotReadHeader)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HEADERDATA, context)
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
            let message = "\(request.method) \(request.url): " + String(cString: curl_easy_strerror(code))
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
