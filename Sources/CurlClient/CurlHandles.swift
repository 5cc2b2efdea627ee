internal import CCurl
internal import CCurlShims

/// libcurl's process-wide initialisation, done once before the first handle.
enum CurlGlobal {
    static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// Owns a `CURLM` multi handle. `curl_multi_wakeup` may be called from any thread; every
/// other use stays on the transport's own thread.
final class CurlMultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    init?() {
        guard CurlGlobal.initialised, let multi = curl_multi_init() else { return nil }
        pointer = multi
    }

    deinit { curl_multi_cleanup(pointer) }

    func wakeup() { curl_multi_wakeup(pointer) }
}

/// Owns a `CURL` easy handle; reused from request to request by the multiplexer, one per
/// request by `BlockingRequest`.
final class CurlEasyHandle {
    let pointer: UnsafeMutableRawPointer

    init?() {
        guard CurlGlobal.initialised, let easy = curl_easy_init() else { return nil }
        pointer = easy
    }

    deinit { curl_easy_cleanup(pointer) }
}

/// Owns a `curl_slist` of header lines.
final class CurlHeaderList {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?

    init(_ lines: [String]) {
        for line in lines { pointer = curl_slist_append(pointer, line) }
    }

    deinit { curl_slist_free_all(pointer) }
}
