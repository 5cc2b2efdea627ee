import APNs
import CCurl
import CShims

/// One blocking HTTP POST through a libcurl easy handle, for the feedback webhook (a
/// few requests a minute at most: the HTTP/2 APNs transport would be overkill).
enum WebhookPoster {
    /// The HTTP status, or why there was none.
    static func post(url: String, body: [UInt8], headers: [String], timeoutSeconds: Int) -> Result<Int, WebhookFailure> {
        guard let easy = CurlEasyHandle() else { return .failure(WebhookFailure("libcurl could not be initialised")) }
        let list = CurlHeaderList(headers)
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

/// Why a webhook delivery did not succeed, for the log.
struct WebhookFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
