import CCurl
import CShims

/// One blocking HTTP POST through a libcurl easy handle, for the feedback webhook (a
/// few requests a minute at most: the HTTP/2 APNs transport would be overkill).
enum WebhookPoster {
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// The HTTP status, or why there was none.
    static func post(url: String, body: [UInt8], headers: [String], timeoutSeconds: Int) -> Result<Int, WebhookFailure> {
        guard initialised, let easy = CurlEasy() else { return .failure(WebhookFailure("libcurl could not be initialised")) }
        let list = CurlList(headers)
        let handle = easy.pointer
        pg_curl_easy_setopt_string(handle, CURLOPT_URL, url)
        pg_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        pg_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
        pg_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        pg_curl_easy_setopt_long(handle, CURLOPT_POST, 1)
        pg_curl_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list.pointer))
        pg_curl_easy_setopt_write_function(handle) { _, size, count, _ in size * count }  // the answer's body is not needed
        let code: CURLcode = body.withUnsafeBytes { raw in
            pg_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(raw.count))
            pg_curl_easy_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            return curl_easy_perform(handle)
        }
        guard code == CURLE_OK else { return .failure(WebhookFailure(String(cString: curl_easy_strerror(code)))) }
        var status = 0
        pg_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(status)
    }
}

/// Owns a `CURL` easy handle.
private final class CurlEasy {
    let pointer: UnsafeMutableRawPointer
    init?() {
        guard let easy = curl_easy_init() else { return nil }
        pointer = easy
    }
    deinit { curl_easy_cleanup(pointer) }
}

/// Owns a `curl_slist` of header lines.
private final class CurlList {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?
    init(_ lines: [String]) {
        for line in lines { pointer = curl_slist_append(pointer, line) }
    }
    deinit { curl_slist_free_all(pointer) }
}

/// Why a webhook delivery did not succeed, for the log.
struct WebhookFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
