internal import COpenSSL

/// OpenSSL's per-thread error queue, read where a call failed so that the error keeps
/// OpenSSL's own reason (`error:1E08010C:DECODER routines::unsupported`) instead of
/// dropping it. Cleared before and after each use: libcurl reads the same queue after a
/// failed handshake on the transport's threads, and must not find our leftovers there.
enum OpenSSLErrorQueue {
    static func clear() { ERR_clear_error() }

    /// `" (OpenSSL: <reason>; <reason>)"` for every error queued, oldest first, the queue
    /// emptied; "" when OpenSSL queued none.
    static func because() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            // At most a few are queued; more would only repeat the first ones' story.
            if reasons.count == 4 { continue }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? "" : " (OpenSSL: " + reasons.joined(separator: "; ") + ")"
    }
}
