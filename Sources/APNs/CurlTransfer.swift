import CCurl
import CShims

/// One request on one easy handle: owns the copy of the body libcurl reads from, the
/// header list, and collects the response through libcurl's callbacks.
final class CurlTransfer {
    let job: TransportJob
    let easy: CurlEasyHandle
    private var headerList: CurlHeaderList?
    private var bodyCopy: UnsafeMutableRawBufferPointer?
    var apnsId: String?
    var retryAfter: String?
    var responseBody: [UInt8] = []
    /// APNs error bodies are small JSON; anything bigger is cut off here.
    static let maximumResponseBody = 16 * 1024

    init(job: TransportJob, easy: CurlEasyHandle, baseURL: String, timeoutMilliseconds: Int) {
        self.job = job
        self.easy = easy
        let request = job.request
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(request.body.count, 1), alignment: 1)
        request.body.withUnsafeBytes { source in copy.copyMemory(from: source) }
        bodyCopy = copy
        // libcurl would add form-encoding and Accept headers APNs has no use for.
        headerList = CurlHeaderList(request.headerLines + ["content-type:", "accept:", "expect:"])
        let e = easy.pointer
        _ = pg_curl_easy_setopt_string(e, CURLOPT_URL, baseURL + request.path)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList?.pointer))
        _ = pg_curl_easy_setopt_off_t(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_POSTFIELDS, copy.baseAddress)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_WRITEDATA, me)
        _ = pg_curl_easy_setopt_pointer(e, CURLOPT_HEADERDATA, me)
    }

    deinit { bodyCopy?.deallocate() }

    /// The status line's code, 0 when no response header arrived.
    var responseCode: Int {
        var code = 0
        _ = pg_curl_easy_getinfo_long(easy.pointer, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Options that stay the same for every request on an easy handle.
    static func configure(_ easy: CurlEasyHandle, settings: TransportSettings) {
        let e = easy.pointer
        let version = settings.baseURL.hasPrefix("https://") ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        _ = pg_curl_easy_setopt_long(e, CURLOPT_HTTP_VERSION, Int(version))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_PIPEWAIT, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_POST, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_NOSIGNAL, 1)
        // No proxy from http_proxy & co.: APNs is reached directly (and libcurl then skips
        // its per-request environment lookups).
        _ = pg_curl_easy_setopt_string(e, CURLOPT_PROXY, "")
        _ = pg_curl_easy_setopt_long(e, CURLOPT_CONNECTTIMEOUT_MS, min(settings.timeoutMilliseconds, 10_000))
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYPEER, 1)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSL_VERIFYHOST, 2)
        _ = pg_curl_easy_setopt_long(e, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        if let caFile = settings.caFile { _ = pg_curl_easy_setopt_string(e, CURLOPT_CAINFO, caFile) }
        _ = pg_curl_easy_setopt_write_function(e, curlWriteBody)
        _ = pg_curl_easy_setopt_header_function(e, curlReadHeader)
    }
}

private let curlWriteBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let room = CurlTransfer.maximumResponseBody - transfer.responseBody.count
    if room > 0 {
        data.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            transfer.responseBody.append(contentsOf: UnsafeBufferPointer(start: bytes, count: min(room, length)))
        }
    }
    return length
}

private let curlReadHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    data.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        let line = UnsafeBufferPointer(start: bytes, count: length)
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        guard name == "apns-id" || name == "retry-after" else { return }
        var value = line[(colon + 1)...]
        while let b = value.first, b == 0x20 || b == 0x09 { value = value.dropFirst() }
        while let b = value.last, b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { value = value.dropLast() }
        let text = String(decoding: value, as: UTF8.self)
        if name == "apns-id" { transfer.apnsId = text } else { transfer.retryAfter = text }
    }
    return length
}
